"""Stopping on Ctrl-C without a half-done cleanup: one SIGINT stops, later ones wait.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group. Under
``ros2 launch`` a node therefore gets it twice, once from the terminal and once from
launch passing it on. Python's default answer to each SIGINT is a KeyboardInterrupt
wherever the main thread happens to be; the second one lands in the node's cleanup
(joining the stepping thread, switching torque off, stopping an emulator process),
leaves it half done and ends the process with a traceback and status -2. Once the
cleanup is over, the interpreter's own exit puts the default action back, so a SIGINT
then kills the process outright (status -2 again, no traceback).

Three tools:

* :func:`run_node`, a robot node's whole ``main()``: SIGINT handling as below, ``rclpy.init``,
  one executor thread spinning the node, the exit status of a node that cannot start
  (2, with its reason on one line; others by exception type), the cleanup;
* :class:`NodeStopSignal`, for a node's ``main()`` (a process of its own): installed
  before ``rclpy.init`` (rclpy's handler calls the handler that was there before it), the
  first SIGINT raises KeyboardInterrupt, as Python's handler does, so spinning ends; every
  later SIGINT, and any SIGINT once :meth:`NodeStopSignal.stopping` has begun, is said
  once on stderr and otherwise ignored. After the cleanup, SIGINT stays ignored while the
  interpreter exits.
* :func:`sigint_flag`, for a process that runs children (``skel-ros sim-to-real``):
  SIGINT only sets an event, which the code checks where stopping is safe; its cleanup
  (stopping every child) cannot be interrupted.

Other signals keep their handlers: SIGTERM and SIGKILL still end a stuck cleanup (launch
escalates to them after its own timeouts).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from types import FrameType

    from rclpy.context import Context
    from rclpy.executors import Executor
    from rclpy.node import Node

__all__ = ["EXIT_SETUP", "SPIN_WAKE", "NodeStopSignal", "make_executor", "run_node", "sigint_flag",
           "spin"]

EXIT_SETUP = 2
"""The exit status of a node that cannot start (a bad parameter, model or configuration)."""


def _say(text: str) -> None:
    # os.write, not print: a Python signal handler may run inside a buffered write of the
    # main thread, and a second write to the same buffer from there is an error.
    with contextlib.suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))


class NodeStopSignal:
    """SIGINT handling of a node process: the first stops it, the others wait for the cleanup.

    Usage (a node's ``main()``)::

        stop = NodeStopSignal("sim_node").install()
        rclpy.init(...)
        try:
            ... spin ...
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        finally:
            with stop.stopping():
                node.destroy_node()
                rclpy.try_shutdown()

    Outside the main thread (where Python cannot install signal handlers) it does
    nothing.
    """

    def __init__(self, name: str) -> None:
        """Args: name: the process's name, in the line said when a SIGINT is ignored."""
        self.name = name
        self._stopping = False
        self._ignored = 0
        self._installed = False

    @property
    def ignored(self) -> int:
        """How many SIGINTs were ignored so far."""
        return self._ignored

    def install(self) -> NodeStopSignal:
        """Handle SIGINT from now on (main thread only); returns ``self``."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._on_sigint)
            self._installed = True
        return self

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:  # noqa: ARG002 - signal API
        if not self._stopping:
            self._stopping = True
            raise KeyboardInterrupt
        self._ignored += 1
        if self._ignored == 1:
            _say(f"{self.name}: stopping already, SIGINT ignored until the cleanup is done\n")

    @contextlib.contextmanager
    def stopping(self) -> Iterator[None]:
        """The cleanup: no SIGINT interrupts it; after it, SIGINT stays ignored.

        Ignored for good, not given back to Python's handler: the process is about to
        exit, and the interpreter's exit resets every Python handler to the default
        action, which would let a late SIGINT kill it (status -2) during that exit.
        """
        self._stopping = True
        try:
            yield
        finally:
            if self._installed:
                signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def sigint_flag() -> Iterator[threading.Event]:
    """SIGINT sets the yielded event instead of raising KeyboardInterrupt.

    For a process that runs children (``skel-ros sim-to-real``): its own code checks the
    event at points of its choosing and stops cleanly from there. A KeyboardInterrupt
    raised wherever the main thread happens to be can land inside ``subprocess``'s
    bookkeeping (between taking and releasing a ``Popen``'s wait lock), after which every
    later wait for that child blocks for ever.

    After the block: if no SIGINT came, the previous handler is back; if one did, SIGINT
    stays ignored (the caller is about to stop because of it, and a terminal's second
    Ctrl-C must not interrupt that stop or the interpreter's exit). Outside the main
    thread nothing changes (signals are delivered to the main thread only).
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def flag(signum: int, frame: FrameType | None) -> None:  # noqa: ARG001 - signal API
        interrupted.set()

    previous: Any = signal.signal(signal.SIGINT, flag)
    try:
        yield interrupted
    finally:
        if interrupted.is_set():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        else:  # None: a handler not set from Python; Python's own is the best stand-in
            signal.signal(signal.SIGINT,
                          signal.default_int_handler if previous is None else previous)


def make_executor(context: Context | None = None) -> Executor:
    """The executor a node process spins: one thread, the cheapest rclpy has.

    A ``SingleThreadedExecutor`` everywhere for now (see docs/hardware.md, "CPU").
    """
    from rclpy.executors import SingleThreadedExecutor

    return SingleThreadedExecutor(context=context)


SPIN_WAKE = 0.5
"""Seconds a node process's executor waits at most before it looks at its context again."""


def spin(executor: Executor, context: Context, stop: threading.Event | None = None) -> None:
    """``executor.spin()``, but the context (and ``stop``) is looked at every :data:`SPIN_WAKE` s.

    rclpy's SIGTERM handler shuts the context down and wakes the executor; once in some
    tens of runs here the wake was lost and the process spun on, shut down, until killed.
    A wait with a timeout ends within :data:`SPIN_WAKE` s of the shutdown whatever wakes it.
    ``stop``: also end when it is set (an executor thread of a node's part that is
    destroyed before the process ends: :mod:`skel_ros.nodes.intake`); to end at once,
    whoever sets it shuts the executor down (``executor.shutdown(timeout_sec=0)``: a
    ``wake()`` does not end rclpy's wait when no callback is ready).
    """
    while context.ok() and not (stop is not None and stop.is_set()):
        executor.spin_once(timeout_sec=SPIN_WAKE)


def run_node(name: str, make_node: Callable[[], Node], args: Sequence[str] | None = None, *,
             exit_codes: Mapping[type[Exception], int] | None = None) -> None:
    """A node process's ``main()``: start, spin until stopped, clean up, exit.

    :class:`NodeStopSignal` is installed before ``rclpy.init`` (its handler calls the one
    it finds): the first SIGINT stops the node, a second one (a terminal's Ctrl-C under
    launch) waits for the cleanup. One executor thread spins the node: a robot node's
    loop has its own thread and its callbacks only hand things over (a
    ``MultiThreadedExecutor``'s thread pool starves the loop of the GIL). A fatal signal
    (SIGABRT, SIGSEGV: a native library's crash) prints every thread's Python stack to
    stderr before the process dies (:mod:`faulthandler`).

    Args:
        name: The process's name (its lines start with it).
        make_node: Builds the node (in the initialized default context).
        args: The command line (None: ``sys.argv``).
        exit_codes: Exceptions of ``make_node`` or the spin that end the process with
            their status and one line (``name: the message``), besides
            :class:`~skel_ros.nodes.errors.NodeSetupError` (:data:`EXIT_SETUP`).
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException

    from skel_ros.nodes.errors import NodeSetupError

    stop = NodeStopSignal(name).install()
    # A native crash (an abort, a segfault in a library) prints every thread's Python
    # stack to stderr first: the one place such an exit can be diagnosed from a log.
    with contextlib.suppress(AttributeError, OSError, ValueError):  # stderr is no file
        faulthandler.enable(all_threads=True)
    try:
        rclpy.init(args=None if args is None else list(args))
    except Exception as exc:  # noqa: BLE001 - unparsable --ros-args: one clear line
        _exit(name, exc, EXIT_SETUP)
    codes: dict[type[Exception], int] = {NodeSetupError: EXIT_SETUP, **(exit_codes or {})}
    node: Node | None = None
    try:
        node = make_node()
        executor = make_executor()
        executor.add_node(node)
        spin(executor, rclpy.get_default_context())
    except tuple(codes) as exc:
        _exit(name, exc, next(c for kind, c in codes.items() if isinstance(exc, kind)))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        with stop.stopping():
            if node is not None:
                node.destroy_node()
            if rclpy.ok():
                rclpy.try_shutdown()


def _exit(name: str, exc: Exception, status: int) -> NoReturn:
    # One line, printed: ROS logging may not be up, and a logger would say it twice (with
    # no handler configured, Python's last-resort handler writes it to stderr too).
    print(f"{name}: {exc}", file=sys.stderr)  # noqa: T201
    sys.exit(status)
