"""Stopping on Ctrl-C without a half-done cleanup: one SIGINT stops, later ones wait.

A terminal's Ctrl-C sends SIGINT to the whole foreground process group. Under
``ros2 launch`` a node therefore gets it twice, once from the terminal and once from
launch passing it on. Python's default answer to each SIGINT is a KeyboardInterrupt
wherever the main thread happens to be; the second one lands in the node's cleanup
(joining the stepping thread, switching torque off, stopping an emulator process),
leaves it half done and ends the process with a traceback and status -2. Once the
cleanup is over, the interpreter's own exit puts the default action back, so a SIGINT
then kills the process outright (status -2 again, no traceback).

Two tools:

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
import os
import signal
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

__all__ = ["NodeStopSignal", "sigint_flag"]


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
