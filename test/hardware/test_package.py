"""The ``skel_ros.hardware`` package: its names load on first use, and only then."""

from __future__ import annotations

import subprocess
import sys

from skel_ros import hardware


def test_every_exported_name_resolves_from_its_module() -> None:
    assert sorted(hardware.__all__) == sorted(hardware._EXPORTS)
    for name in hardware.__all__:
        value = getattr(hardware, name)
        module = sys.modules[hardware._EXPORTS[name]]
        assert value is getattr(module, name), name
    assert set(hardware.__all__) <= set(dir(hardware))


def test_an_emulator_process_does_not_import_the_model_readers() -> None:
    """The Dynamixel emulator runs in a process of its own: importing it must not pull in
    the model package or the hardware backend through the package's ``__init__`` (about half a
    second of every emulator start)."""
    code = ("import sys, skel_ros.emulation.dynamixel\n"
            "print(sorted(m for m in ('skel_ros.model', 'skel_ros.hardware.config',"
            " 'skel_ros.hardware.backend') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
