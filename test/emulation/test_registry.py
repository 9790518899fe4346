"""Emulators found by protocol name (``skel_ros.emulation``), as protocols are.

The built-in table and the entry-point group ``skel_ros.emulators`` (a third party's
emulator registered this way drives the hardware node and ``skel-ros emulate``:
``test/hardware/test_plugins.py``); listing the names imports nothing; an emulated bus
never goes onto the hardware its YAML names. The suite every protocol's driver and
emulator pass is ``test/hardware/test_protocol_conformance.py``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skel_ros.emulation import BUILTIN, emulated_transport, emulator_for, emulator_names
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.plugins import BUILTIN as PROTOCOLS
from skel_ros.hardware.plugins import protocol

REPO = Path(__file__).resolve().parents[2]


def test_every_builtin_protocol_has_a_builtin_emulator() -> None:
    assert set(BUILTIN) == set(PROTOCOLS)
    assert set(BUILTIN) <= set(emulator_names())
    for name in BUILTIN:
        assert callable(emulator_for(name))


def test_listing_imports_no_emulator_and_the_drivers_import_none() -> None:
    """Names come without imports; the protocols' plugins and drivers load without any
    emulator module (a robot computer never imports one)."""
    code = textwrap.dedent("""
        import sys
        from skel_ros.emulation import emulator_names
        assert {"dynamixel", "canopen", "mit"} <= set(emulator_names())
        from skel_ros.hardware.plugins import protocol
        for name in ("dynamixel", "canopen", "mit"):
            protocol(name).bus_class
        loaded = sorted(m for m in sys.modules if m.startswith("skel_ros.emulation."))
        assert not loaded, loaded
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "ok"


def test_unknown_and_broken_emulators_are_clear_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="unknown emulator 'nope'; known: canopen, dynamixel,"):
        emulator_for("nope")
    from skel_ros import emulation
    from skel_ros.hardware.plugins import Registry

    broken = Registry("emulator", "skel_ros.test_no_such_group",
                      {"dxl": "skel_ros.emulation:GROUP", "gone": "skel_ros.no_such_module:x"})
    monkeypatch.setattr(emulation, "_EMULATORS", broken)
    with pytest.raises(ConfigError, match=r"emulator 'dxl': skel_ros.emulation:GROUP is"
                                          r" 'skel_ros.emulators', not a function"):
        emulator_for("dxl")
    with pytest.raises(ConfigError, match="emulator 'gone' is not available: No module"):
        emulator_for("gone")


def test_emulators_never_go_onto_a_real_can_bus() -> None:
    can, serial = protocol("mit"), protocol("dynamixel")
    assert emulated_transport(can, {"interface": "socketcan", "channel": "can0"}) == {}
    assert emulated_transport(can, {"interface": "virtual", "channel": "x"}) == {
        "interface": "virtual", "channel": "x"}
    assert emulated_transport(serial, {"port": "/dev/ttyUSB0"}) == {"port": "/dev/ttyUSB0"}
