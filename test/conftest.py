"""Shared fixtures for the whole test suite.

``ros_env`` gives every ROS test, and every process it starts, an isolated ROS 2 setting:
a DDS domain of its own, discovery confined to this machine, logs in a temporary
directory. See docs/packaging.md and ``config/fastdds_localhost.xml``.
"""

from __future__ import annotations

import os
import signal
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
