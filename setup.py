"""Packaging for skel_ros (ament_python).

Used three ways, all with the same metadata:

* ``pip install -e .`` (``scripts/setup.sh``): pip builds a PEP 660 editable wheel and
  writes the console scripts to the environment's ``bin/``.
* ``colcon build``: colcon runs ``setup.py ... install --install-scripts
  $base/lib/skel_ros`` (taken from ``setup.cfg``) so that ``ros2 run skel_ros <node>`` finds
  the scripts, and ``data_files`` installs the ament index marker, ``package.xml``, launch
  files, configuration and examples under ``share/``.
* ``colcon build --symlink-install``: ``setup.py develop``, which reads
  ``[develop] script_dir`` from ``setup.cfg``.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import find_packages, setup

PACKAGE_NAME = "skel_ros"
HERE = Path(__file__).resolve().parent


def _tree(source: str, suffixes: tuple[str, ...] = ()) -> list[tuple[str, list[str]]]:
    """Map every file under ``source`` into ``share/skel_ros/<source>/...``.

    Args:
        source: A directory relative to this file.
        suffixes: If given, only file names ending with one of these are taken.

    Returns:
        ``data_files`` entries, one per directory that holds files, with paths relative to
        this file as setuptools requires.
    """
    entries: dict[str, list[str]] = {}
    root = HERE / source
    if not root.is_dir():
        return []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        if suffixes and not path.name.endswith(suffixes):
            continue
        relative = path.relative_to(HERE)
        target = Path("share", PACKAGE_NAME, *relative.parent.parts)
        entries.setdefault(target.as_posix(), []).append(relative.as_posix())
    return list(entries.items())


setup(
    name=PACKAGE_NAME,
    version="0.1.0",
    description="DART SKEL robot models in ROS 2: parser, simulation node and hardware bridge.",
    license="BSD-3-Clause",
    maintainer="skel_ros maintainers",
    maintainer_email="maintainers@users.noreply.a-seed-883c2e36.example",
    python_requires=">=3.10",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE_NAME: ["py.typed", "hardware/canopen402/drive.eds"]},
    zip_safe=False,
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE_NAME}"]),
        (f"share/{PACKAGE_NAME}", ["package.xml"]),
        *_tree("launch", (".launch.py",)),
        *_tree("config", (".yaml", ".rviz", ".xml")),
        *_tree("examples"),
    ],
    install_requires=[
        "lxml",
        "numpy",
        "pyyaml",
        "pyserial",
        "python-can",
    ],
    # dartpy only for simulation: the hardware node must run without it.
    extras_require={
        "sim": ["dartpy>=6.20,<7"],
        # MuJoCo: to load an exported MJCF file (`skel-ros convert --to mjcf` needs nothing).
        "mujoco": ["mujoco>=3.3,<5"],
        # xacro: to read `.urdf.xacro` files (plain URDF needs nothing more).
        "urdf": ["xacro>=2.0,<3"],
        # Real robots' URDFs the URDF import is tested on (test/model/test_urdf_robots.py).
        "test-robots": ["example-robot-data>=4.1,<7", "yourdfpy>=0.0.56,<0.1"],
    },
    entry_points={
        "console_scripts": [
            "skel-ros = skel_ros.cli.main:main",
            "sim_node = skel_ros.nodes.sim_node:main",
            "hardware_node = skel_ros.nodes.hardware_node:main",
            "trajectory_player = skel_ros.nodes.trajectory_player:main",
        ],
    },
)
