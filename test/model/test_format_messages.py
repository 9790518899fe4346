"""Formats ``load_model`` recognises get words that name them.

Phobos exports SMURF (a YAML index of a model's URDF and annotation files),
URDF and SDF; skel-ros reads URDF and SMURF, not SDF. Loading SDF must say which
format it is and what to do instead of a generic "not a SKEL, CASPR bodies or
Phobos document"; a SMURF index whose URDF is missing names that file; a
``{models: [...]}`` document without the ``skel`` key skel-ros writes beside it
must say that, not that it lacks links and joints.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from skel_ros.model import load_model
from skel_ros.model.formats import ModelFormat, detect_format
from skel_ros.model.interchange_errors import UnknownFormatError, UrdfError
from skel_ros.model.phobos import dump_phobos, world_to_phobos
from skel_ros.model.skel_parser import load_skel

if TYPE_CHECKING:
    from pathlib import Path

URDF = """<?xml version="1.0"?>
<!-- exported by Phobos -->
<robot name="arm">
  <link name="base"/>
</robot>
"""

SDF = """<?xml version="1.0"?>
<sdf version="1.6"><model name="arm"><link name="base"/></model></sdf>
"""

# The main file Phobos writes for a model (``<model>.smurf``).
SMURF = """# main SMURF file of model "arm"
SMURF version: 1.0.0
modelname: arm
date: 2024-01-01 12:00:00
files:
- ../urdf/arm.urdf
- arm_motors.yml
- arm_sensors.yml
"""

TWO = """<skel><world name="w">
<skeleton name="a"><body name="a1"><inertia><mass>1</mass></inertia></body>
<joint type="free" name="ja"><parent>world</parent><child>a1</child></joint></skeleton>
<skeleton name="b"><body name="b1"><inertia><mass>1</mass></inertia></body>
<joint type="free" name="jb"><parent>world</parent><child>b1</child></joint></skeleton>
</world></skel>"""


def _error(source: str | Path) -> UnknownFormatError:
    with pytest.raises(UnknownFormatError) as info:
        load_model(source)
    return info.value


def test_urdf_is_read(tmp_path: Path) -> None:
    path = tmp_path / "arm.urdf"
    path.write_text(URDF)
    assert detect_format(URDF.encode()) is ModelFormat.URDF
    world = load_model(path)
    assert [b.name for b in world.skeletons[0].bodies] == ["base"]
    path.write_text(URDF.replace('<link name="base"/>', ""))
    with pytest.raises(UrdfError) as info:
        load_model(path)
    assert "<link>" in info.value.reason
    assert info.value.location.line == 3  # the <robot> element
    assert str(path) in str(info.value)


def test_sdf_is_named() -> None:
    assert detect_format(SDF.encode()) is ModelFormat.SDF
    err = _error(SDF)
    assert "SDF" in err.reason
    assert "not supported" in err.reason
    assert err.location.line == 2


def test_smurf_without_its_urdf_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "arm.smurf"
    path.write_text(SMURF)
    with pytest.raises(UrdfError) as info:
        load_model(path)
    assert "../urdf/arm.urdf" in str(info.value)  # where the model should be
    assert info.value.location.line == 5  # 'files'


def test_models_envelope_without_skel_key_says_so() -> None:
    doc = world_to_phobos(load_skel(TWO))
    assert set(doc) == {"skel", "models"}
    assert isinstance(load_model(dump_phobos(doc, "yaml")).skeletons, tuple)  # as written
    del doc["skel"]
    text = dump_phobos(doc, "yaml")
    err = _error(text)
    assert "'models'" in err.reason
    assert "'skel'" in err.reason
    assert "links" not in err.reason
    assert "skel" in err.hint
    assert err.location.line == text.splitlines().index("models:") + 1
    # JSON too
    assert "'skel'" in _error(dump_phobos(doc, "json")).reason


def test_cli_prints_the_format(tmp_path: Path) -> None:
    path = tmp_path / "arm.sdf"
    path.write_text(SDF)
    out = subprocess.run([sys.executable, "-m", "skel_ros.cli.main", "validate", str(path)],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 1
    assert "SDF" in out.stderr
    assert "not supported" in out.stderr


def test_skel_after_another_top_level_element_is_skel(tmp_path: Path) -> None:
    """DART reads the first top-level <skel> even after another element; so does load_model."""
    text = "<notes>written by hand</notes>\n" + TWO
    assert detect_format(text.encode()) is ModelFormat.SKEL
    path = tmp_path / "two.skel"
    path.write_text(text)
    world = load_model(path)
    assert [s.name for s in world.skeletons] == ["a", "b"]
    assert any("outside the root" in w.message for w in world.warnings)
