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

In both colcon builds the ``skel-ros`` command is also copied to ``<prefix>/bin``
(``_CLI_IN_BIN``): colcon's environment hooks put ``bin`` on ``PATH``, not ``lib/skel_ros``,
so after ``source install/setup.bash`` ``skel-ros`` runs as a command (the nodes stay in
``lib/skel_ros`` only, for ``ros2 run``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.develop import develop
from setuptools.command.install_scripts import install_scripts

PACKAGE_NAME = "skel_ros"
HERE = Path(__file__).resolve().parent
_CLI_IN_BIN = "skel-ros"
"""The console script that colcon builds also put in ``<prefix>/bin`` (on ``PATH``)."""


def _cli_in_bin(script_dir: str) -> tuple[Path, Path] | None:
    """(script, its copy in ``<prefix>/bin``) when ``script_dir`` is ament's ``lib/skel_ros``.

    Any other script directory (pip's wheel and editable builds) gets nothing extra.
    """
    scripts = Path(script_dir)
    if scripts.parts[-2:] != ("lib", PACKAGE_NAME):
        return None
    return scripts / _CLI_IN_BIN, scripts.parents[1] / "bin" / _CLI_IN_BIN


class _InstallScripts(install_scripts):
    """``colcon build``: ``skel-ros`` in ``lib/skel_ros`` and in ``bin``."""

    def run(self) -> None:
        super().run()
        pair = _cli_in_bin(self.install_dir)
        if pair and pair[0].is_file():
            self.mkpath(str(pair[1].parent))
            self.copy_file(str(pair[0]), str(pair[1]))
            self.outfiles.append(str(pair[1]))  # in the install record, like the others


class _Develop(develop):
    """``colcon build --symlink-install``: the same for the ``develop`` scripts."""

    def install_wrapper_scripts(self, dist):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        result = super().install_wrapper_scripts(dist)
        pair = _cli_in_bin(self.script_dir)
        if pair and pair[0].is_file() and not self.uninstall:
            pair[1].parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(pair[0], pair[1])
        return result


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
        *_tree("config", (".yaml", ".rviz", ".xml", ".json")),
        *_tree("examples"),
    ],
    install_requires=[
        "lxml",
        "numpy",
        "pyyaml",
        "pyserial",
        "python-can",
        # CANopen CiA 402 drives (protocol: canopen); rosdep key canopen-pip.
        "canopen>=2.3,<3",
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
        # `skel-ros view`: the robots in a browser (live, replay, exported HTML).
        "view": ["viser>=1.0,<2"],
        # `skel-ros sweep --backend ray`: trials on a Ray cluster (or one started locally).
        "ray": ["ray[default]>=2.50,<3"],
        # `skel-ros excite` / `skel-ros identify`: MuJoCo's inverse dynamics and system
        # identification tools (mujoco.sysid; bench/identify_sysid.py compares them).
        "sysid": ["mujoco[sysid]>=3.5,<5"],
    },
    cmdclass={"install_scripts": _InstallScripts, "develop": _Develop},
    entry_points={
        "console_scripts": [
            "skel-ros = skel_ros.cli.main:main",
            "sim_node = skel_ros.nodes.sim_node:main",
            "hardware_node = skel_ros.nodes.hardware_node:main",
            "trajectory_player = skel_ros.nodes.trajectory_player:main",
        ],
    },
)
