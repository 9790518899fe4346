"""package:// URIs both ways (skel_ros.resources), portable and embedded mesh URIs
(skel_ros.mesh_uris), and package:// arguments of the skel-ros command.

Each test builds its own ament prefixes in a temporary directory, laid out as colcon
installs a package: ``<prefix>/share/ament_index/resource_index/packages/<name>`` (the
index marker) and ``<prefix>/share/<name>/...``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skel_ros.cli.main import main
from skel_ros.mesh_uris import embedded_mesh_uris, portable_mesh_uris
from skel_ros.resources import package_share, package_uri, resolve

REPO = Path(__file__).resolve().parents[1]


def _prefix(root: Path, name: str, files: dict[str, bytes]) -> Path:
    """An install prefix holding package ``name`` with ``files`` (relative to its share)."""
    (root / "share" / "ament_index" / "resource_index" / "packages").mkdir(parents=True,
                                                                           exist_ok=True)
    (root / "share" / "ament_index" / "resource_index" / "packages" / name).write_text("")
    (root / "share" / name).mkdir(exist_ok=True)
    for rel, data in files.items():
        path = root / "share" / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _use(monkeypatch: pytest.MonkeyPatch, *prefixes: Path) -> None:
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join(map(str, prefixes)))


def test_resolve_any_package_through_the_index(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = _prefix(tmp_path / "a", "robot", {"meshes/base.stl": b"a"})
    second = _prefix(tmp_path / "b", "robot", {"meshes/base.stl": b"b", "only_b.stl": b"b"})
    _use(monkeypatch, first, second)
    assert package_share("robot") == first / "share" / "robot"
    assert resolve("package://robot/meshes/base.stl").read_bytes() == b"a"  # the first prefix
    with pytest.raises(FileNotFoundError, match=r"only_b\.stl not found"):
        resolve("package://robot/only_b.stl")  # ROS does not look further either
    with pytest.raises(FileNotFoundError, match="'other' is not in the ament index"):
        resolve("package://other/x.stl")
    with pytest.raises(FileNotFoundError, match="package://<package>/<path>"):
        resolve("package://robot")
    # skel_ros's own files still come from the source tree first.
    assert resolve("package://skel_ros/examples/arm.skel") == REPO / "examples" / "arm.skel"


def test_package_uri_of_installed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _prefix(tmp_path / "a", "robot", {"meshes/base.stl": b"a"})
    second = _prefix(tmp_path / "b", "robot", {"meshes/base.stl": b"b"})
    _use(monkeypatch, first, second)
    assert package_uri(first / "share/robot/meshes/base.stl") == "package://robot/meshes/base.stl"
    # A shadowed prefix: the URI would load the first prefix's file, not this one.
    assert package_uri(second / "share/robot/meshes/base.stl") is None
    assert package_uri(tmp_path / "elsewhere.stl") is None
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert package_uri(first / "share/robot/meshes/base.stl") is None  # nothing sourced


def test_package_uri_of_source_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of a package's source tree: package:// only if the installed file is the same."""
    source = tmp_path / "src" / "robot"
    (source / "meshes").mkdir(parents=True)
    (source / "package.xml").write_text(
        '<?xml version="1.0"?>\n<package format="3"><name>robot</name></package>\n')
    (source / "meshes" / "base.stl").write_bytes(b"mesh")
    (source / "meshes" / "changed.stl").write_bytes(b"new")
    (source / "meshes" / "new.stl").write_bytes(b"not built yet")
    install = _prefix(tmp_path / "install", "robot",
                      {"meshes/base.stl": b"mesh", "meshes/changed.stl": b"old"})
    # --symlink-install links instead of copying.
    (install / "share/robot/linked.stl").symlink_to(source / "meshes" / "new.stl")
    _use(monkeypatch, install)
    assert package_uri(source / "meshes" / "base.stl") == "package://robot/meshes/base.stl"
    assert package_uri(source / "meshes" / "changed.stl") is None  # rebuild first
    assert package_uri(source / "meshes" / "new.stl") is None
    assert package_uri(install / "share/robot/linked.stl") == "package://robot/linked.stl"


def test_portable_mesh_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "capsule-1.stl").write_bytes(b"generated")
    (cache / "capsule-2.stl").write_bytes(b"not shipped")
    install = _prefix(tmp_path / "install", "robot",
                      {"models/meshes/capsule-1.stl": b"generated", "models/hand.dae": b"x",
                       "models/meshes/hand.dae": b"another file of the same name"})
    outside = tmp_path / "hand.dae"
    outside.write_bytes(b"y")
    models = install / "share" / "robot" / "models"
    generated, not_shipped = (cache / "capsule-1.stl").as_uri(), (cache / "capsule-2.stl").as_uri()
    urdf = (
        '<?xml version="1.0"?>\n<robot name="r">\n'
        f'  <link name="a"><visual><geometry><mesh filename="{generated}"/>'
        '</geometry></visual></link>\n'
        f'  <link name="b"><visual><geometry><mesh filename="{not_shipped}"/>'
        '</geometry></visual></link>\n'
        f'  <link name="c"><visual><geometry><mesh filename="{(models / "hand.dae").as_uri()}"'
        ' scale="1 1 1"/></geometry></visual></link>\n'
        f'  <link name="d"><visual><geometry><mesh filename="{outside.as_uri()}"/></geometry>'
        '</visual></link>\n</robot>\n')
    _use(monkeypatch, install)
    out = portable_mesh_uris(urdf, [models / "meshes"], mesh_dir=cache)
    assert 'filename="package://robot/models/meshes/capsule-1.stl"' in out
    assert f'filename="{(cache / "capsule-2.stl").as_uri()}"' in out  # not shipped: as it was
    # A model's own mesh: by its package, never swapped for a namesake in meshes/.
    assert 'filename="package://robot/models/hand.dae" scale="1 1 1"' in out
    assert f'filename="{outside.as_uri()}"' in out  # outside every package: as it was
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert portable_mesh_uris(urdf, [models / "meshes"], mesh_dir=cache) == urdf


def test_embedded_mesh_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each mesh this machine has becomes a data: URI with its media type; the rest stay."""
    import base64

    install = _prefix(tmp_path / "install", "robot", {"meshes/hand.DAE": b"<COLLADA/>"})
    stl = tmp_path / "a b.stl"
    stl.write_bytes(b"solid x")
    other = tmp_path / "hand.ply"
    other.write_bytes(b"ply")

    def mesh(uri: str) -> str:
        return (f'<link name="{len(uri)}"><visual><geometry><mesh filename="{uri}"/>'
                '</geometry></visual></link>')

    kept = ["package://robot/meshes/missing.stl", (tmp_path / "gone.stl").as_uri(),
            other.as_uri(), "https://example.com/hand.stl"]
    urdf = ('<?xml version="1.0"?>\n<robot name="r">'
            + "".join(mesh(u) for u in [stl.as_uri(), "package://robot/meshes/hand.DAE", *kept])
            + "</robot>\n")
    _use(monkeypatch, install)
    out = embedded_mesh_uris(urdf)
    stl_data = base64.b64encode(b"solid x").decode()
    dae_data = base64.b64encode(b"<COLLADA/>").decode()
    assert f'filename="data:model/stl;base64,{stl_data}"' in out
    assert f'filename="data:model/vnd.collada+xml;base64,{dae_data}"' in out
    assert all(f'filename="{u}"' in out for u in kept), out
    only_kept = '<robot name="r">' + "".join(mesh(u) for u in kept) + "</robot>"
    assert embedded_mesh_uris(only_kept) is only_kept  # nothing to embed: the same text


def test_cli_takes_package_uris(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    prefix = _prefix(tmp_path / "install", "robot", {})
    shutil.copy(REPO / "examples" / "arm.skel", prefix / "share" / "robot" / "arm.skel")
    _use(monkeypatch, prefix)
    assert main(["validate", "package://robot/arm.skel"]) == 0
    assert "arm.skel: OK" in capsys.readouterr().out
    assert main(["inspect", "package://skel_ros/examples/quadruped.skel"]) == 0
    with pytest.raises(SystemExit) as exit_:
        main(["inspect", "package://robot/missing.skel"])
    assert exit_.value.code == 2
    assert "package://robot/missing.skel not found" in capsys.readouterr().err


def test_urdf_command_ships_meshes_beside_the_model(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``skel-ros urdf MODEL --mesh-dir MODEL_DIR/meshes``, installed: package:// URIs."""
    prefix = _prefix(tmp_path / "install", "robot", {})
    share = prefix / "share" / "robot"
    shutil.copy(REPO / "examples" / "arm.skel", share / "arm.skel")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _use(monkeypatch, prefix)
    out = tmp_path / "arm.urdf"
    assert main(["urdf", "package://robot/arm.skel", "-o", str(out)]) == 0
    assert "file://" + str(tmp_path / "cache") in out.read_text()  # generated: in the cache
    assert main(["urdf", str(share / "arm.skel"), "--mesh-dir", str(share / "meshes"),
                 "-o", str(out)]) == 0
    assert "file://" not in out.read_text()
    assert main(["urdf", "package://robot/arm.skel", "-o", str(out)]) == 0
    text = out.read_text()
    assert "file://" not in text
    assert text.count("package://robot/meshes/") >= 2
    assert main(["urdf", "package://robot/arm.skel", "--file-uris", "-o", str(out)]) == 0
    assert "package://" not in out.read_text()


def test_node_outputs_name_a_packaged_model_mesh_by_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """robot_description and ~/markers of a model whose mesh file is in an installed package."""
    pytest.importorskip("visualization_msgs")
    from skel_ros.model import load_model
    from skel_ros.nodes.markers import shape_markers
    from skel_ros.nodes.robot_publisher import robot_description

    text = (REPO / "examples" / "arm.skel").read_text()
    capsule = "<capsule><radius>0.02</radius><height>0.16</height></capsule>"
    assert text.count(capsule) >= 1
    mesh = next((REPO / "examples" / "meshes").glob("capsule-*.stl")).read_bytes()
    prefix = _prefix(tmp_path / "install", "robot", {
        "arm.skel": text.replace(capsule, "<mesh><file_name>parts/upper.stl</file_name>"
                                          "<scale>1 1 1</scale></mesh>").encode(),
        "parts/upper.stl": mesh})
    _use(monkeypatch, prefix)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    world = load_model(prefix / "share" / "robot" / "arm.skel")
    assert 'filename="package://robot/parts/upper.stl"' in robot_description(world, "r1/")
    resources = {m.mesh_resource for m in shape_markers(world, "r1/").markers if m.mesh_resource}
    assert resources == {"package://robot/parts/upper.stl"}
    monkeypatch.delenv("AMENT_PREFIX_PATH")  # the same files, no package in sight
    resources = {m.mesh_resource for m in shape_markers(world, "").markers if m.mesh_resource}
    assert resources == {(prefix / "share/robot/parts/upper.stl").as_uri()}
