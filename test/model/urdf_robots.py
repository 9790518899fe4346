"""Real robots' URDFs for the URDF tests: example-robot-data's files, when installed.

``example-robot-data`` (PyPI, the ``test-robots`` extra; requirements/dev.txt) is a cmeel
wheel: its files land in ``site-packages/cmeel.prefix/share/example-robot-data/robots``,
and ``cmeel.prefix`` is an ament prefix (``share/ament_index``), so its
``package://example-robot-data/...`` mesh URIs resolve once that prefix is on
``AMENT_PREFIX_PATH`` (:func:`ament_env`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_REL = Path("cmeel.prefix", "share", "example-robot-data", "robots")

# Robots nobody here wrote, picked to cover arms, quadrupeds, humanoids and the URDF
# joint types, and to load in well under a second each: (id, path under robots/).
ROBOTS = [
    ("ur5", "ur_description/urdf/ur5_robot.urdf"),  # arm on a 'world' link
    ("xarm7", "xarm_description/urdf/xarm7.urdf"),  # arm, continuous joints
    ("so100", "so_arm_description/urdf/so100.urdf"),  # small arm, floating root
    ("solo12", "solo_description/robots/solo12.urdf"),  # quadruped
    ("hyq", "hyq_description/robots/hyq_no_sensors.urdf"),  # quadruped
    ("simple_humanoid", "simple_humanoid_description/urdf/simple_humanoid.urdf"),
    ("g1", "g1_description/urdf/g1_29dof_rev_1_0.urdf"),  # humanoid, 29 DOFs
    ("double_pendulum", "double_pendulum_description/urdf/double_pendulum_continuous.urdf"),
]


def robots_dir() -> Path | None:
    """example-robot-data's ``robots`` directory, or None when it is not installed."""
    for entry in sys.path:
        candidate = Path(entry) / _REL
        if candidate.is_dir():
            return candidate
    return None


def prefix() -> Path:
    """The ament prefix holding example-robot-data (skips the test when not installed)."""
    robots = robots_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed (pip install -r requirements/dev.txt,"
                    " or skel_ros[test-robots])")
    return robots.parents[2]


def ament_env(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put example-robot-data's prefix on AMENT_PREFIX_PATH; returns its ``robots`` dir."""
    root = prefix()
    old = os.environ.get("AMENT_PREFIX_PATH", "")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join(p for p in (str(root), old) if p))
    return root / "share" / "example-robot-data" / "robots"
