"""Child processes that end with their parent (Linux): ``preexec_fn`` for ``Popen``.

A process that starts others (``skel-ros sim-to-real`` its nodes, ``skel-ros sweep`` its
trials) often starts them in sessions of their own, so that a terminal's Ctrl-C reaches
only the parent, which stops them in order. If the parent itself is killed (SIGKILL, an
OOM kill) nothing stops them: nodes that go on publishing would be heard by the next run
that takes their ROS domain. :func:`ending_with_parent` gives ``Popen`` a ``preexec_fn``
that asks the kernel for a signal when the parent's starting thread ends
(``PR_SET_PDEATHSIG``), and gives the signal its default action back (a parent started
with it ignored would pass that on). Only C calls run in the child (the parent may have
threads). Elsewhere than Linux, None: the children are started as before.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ending_with_parent"]

_PR_SET_PDEATHSIG = 1


def _load_libc() -> Any:  # noqa: ANN401 - ctypes' CDLL
    """The C library (``prctl``, ``signal``), loaded in the parent: the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl  # noqa: B018 - present, or AttributeError here rather than in the child
        libc.signal  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_libc = _load_libc()


def ending_with_parent(sig: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn``: the child gets ``sig`` (default action) when its parent ends.

    The child also starts with no signal blocked: a blocked mask is inherited, and a
    parent that blocks ``sig`` (a Ray worker blocks SIGINT) would pass on children that
    never receive it: neither this signal nor the SIGINT that stops them in order.
    None where the C library's ``prctl`` is not available (not Linux).
    """
    libc = _libc
    if libc is None:
        return None

    def preexec() -> None:
        with contextlib.suppress(Exception):
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            libc.signal(sig, signal.SIG_DFL)
            libc.prctl(_PR_SET_PDEATHSIG, sig)

    return preexec
