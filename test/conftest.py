"""Shared fixtures for the whole test suite.

``ros_env`` gives every ROS test, and every process it starts, an isolated ROS 2 setting:
a DDS domain of its own, discovery confined to this machine, logs in a temporary
directory. See docs/packaging.md and ``config/fastdds_localhost.xml``.
"""

from __future__ import annotations

import os
import signal
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from skel_ros.nodes.sim_to_real import claim_domain

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
FASTDDS_PROFILE = REPO_ROOT / "config" / "fastdds_localhost.xml"

# Variables that would take discovery elsewhere (a discovery server, static peers, another
# middleware) if the developer's shell happens to set them.
_CLEARED = (
    "ROS_LOCALHOST_ONLY",
    "ROS_STATIC_PEERS",
    "ROS_DISCOVERY_SERVER",
    "ROS_SUPER_CLIENT",
    "FASTRTPS_DEFAULT_PROFILES_FILE",
    "RMW_FASTRTPS_USE_QOS_FROM_XML",
    "ROS_SECURITY_ENABLE",
)


def pytest_configure(config: pytest.Config) -> None:
    """Give SIGINT its usual handling when the suite was started with it ignored.

    A shell without job control starts a background command (``./scripts/test.sh &``, a
    CI step run that way) with SIGINT ignored, Python keeps an inherited "ignored", and
    every process the tests start inherits it in turn. The tests that press Ctrl-C on a
    node or an emulator (SIGINT to a child) would then see a child that never stops.
    Python's own handler here means a handler that exec resets to the default in children.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# Files whose tests each run a whole workflow (sim-to-real, sim-to-sim, sweeps, benchmarks:
# node processes for 10-30 s a test). pytest-xdist's --dist loadfile (scripts/test.sh) hands
# the files out most tests first, which left these, one or two tests each, to the end, where
# a worker takes the next file while its last test runs: one worker ran three of them (45 s)
# while the other had finished (a run of the suite on 2026-11-29: 36 s apart).
WORKFLOW_FILES = ("test/nodes/test_sim_to_", "test/sweep/", "test/test_bench.py")


class _WorkQueue(OrderedDict):
    """pytest-xdist's work queue (a file -> its tests, most tests first) whose next file
    (``popitem(last=False)``) is the first of :data:`WORKFLOW_FILES` or the first of the
    others, as :attr:`workflows` says (the others, or the workflows, once none is left)."""

    def __init__(self) -> None:
        super().__init__()
        self.workflows = True

    def popitem(self, last: bool = True) -> tuple[Any, Any]:
        if last or not self:
            return super().popitem(last=last)
        scope = next((s for s in self if s.startswith(WORKFLOW_FILES) == self.workflows),
                     next(iter(self)))
        return scope, self.pop(scope)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile``: xdist's file scheduling, with the workflow files on the
    first worker, one after the other from the start, and the other files first on the
    others: no two workflows side by side (they starve each other's nodes), and the run
    ends on short files on every worker (two runs of the suite that evening: the workers
    ended 0.8 and 6 s apart)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    if not hasattr(LoadFileScheduling, "_assign_work_unit"):  # pytest-xdist's own, >= 3.6
        return None

    class WorkflowsOnOneWorker(LoadFileScheduling):
        def _assign_work_unit(self, node: Any) -> None:
            self.workqueue.workflows = node is self.nodes[0]
            super()._assign_work_unit(node)

    scheduler = WorkflowsOnOneWorker(config, log)
    scheduler.workqueue = _WorkQueue()
    return scheduler


@pytest.fixture(scope="session")
def ros_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Apply an isolated ROS 2 environment to this process and return it for children.

    Sets, in ``os.environ`` for the whole session (restored afterwards):

    * ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``: no discovery traffic off this machine;
    * ``ROS_DOMAIN_ID``: one claimed as every run of this package claims one
      (:func:`skel_ros.nodes.sim_to_real.claim_domain`: a lock held until this process
      ends), so parallel sessions, the pytest-xdist workers of one, and the runs a test
      starts without a domain (a sweep's trials claim their own) never meet on one;
    * ``ROS_HOME`` and ``ROS_LOG_DIR`` in a temporary directory (not ``~/.ros``);
    * ``FASTDDS_DEFAULT_PROFILES_FILE``: ``config/fastdds_localhost.xml`` (loopback UDP and
      shared memory only; 250 ms discovery announcements, so late joiners connect fast);
    * ``RMW_IMPLEMENTATION=rmw_fastrtps_cpp`` (the profile is Fast DDS's);
    * ``PYTHONUNBUFFERED=1``, so a child's output can be read line by line.

    Returns:
        A complete environment (a copy of ``os.environ`` after the changes) to pass as
        ``env=`` to ``subprocess``; children also inherit it without that.
    """
    ros_home = tmp_path_factory.mktemp("ros_home")
    settings = {
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "ROS_DOMAIN_ID": str(claim_domain()),
        "ROS_HOME": str(ros_home),
        "ROS_LOG_DIR": str(ros_home / "log"),
        "FASTDDS_DEFAULT_PROFILES_FILE": str(FASTDDS_PROFILE),
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        "PYTHONUNBUFFERED": "1",
    }
    with pytest.MonkeyPatch.context() as patch:
        for name in _CLEARED:
            patch.delenv(name, raising=False)
        for name, value in settings.items():
            patch.setenv(name, value)
        yield dict(os.environ)


@pytest.fixture
def context(ros_env: dict[str, str]) -> Iterator[Any]:
    """An rclpy context of its own for one test (in :func:`ros_env`), shut down after."""
    import rclpy
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.try_shutdown(context=ctx)
