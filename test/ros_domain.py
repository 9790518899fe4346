"""The ROS domain of a test session (``ros_env`` in conftest.py), one per pytest-xdist worker.

A module of its own, not conftest.py, so that a test can import it: ``conftest`` is a name
several folders' conftest.py files share in ``sys.modules``.
"""

from __future__ import annotations

import os


def session_domain_id(pid: int, worker: int = 0) -> int:
    """Return the ROS domain id for worker ``worker`` of a test session run by process ``pid``.

    Domains 1..101 are valid on Linux with the default port mapping. 0 is left out: it is
    every ROS installation's default, where stray nodes live. The workers of one session
    (pytest-xdist: ``pid`` is then the controller's, the workers' parent) get consecutive
    domains, so two of them never share one.
    """
    return 1 + (pid + worker) % 101


def this_session_domain_id() -> int:
    """This process's domain: by its pid, or by its controller's pid and its worker number."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under pytest-xdist
    if worker.startswith("gw") and worker[2:].isdigit():
        return session_domain_id(os.getppid(), int(worker[2:]))
    return session_domain_id(os.getpid())
