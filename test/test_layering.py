"""Import layering: every part of the package on its floor, read from every import.

Two checks:

* **Static** (:func:`import_violations`): an ``ast`` walk of every ``.py`` under
  ``skel_ros/`` reads EVERY import statement: at module level, inside functions and
  methods (the lazy imports that load at first use), under ``if TYPE_CHECKING:`` and
  ``try:``, and every ``"skel_ros.x.y:attribute"`` reference a registry loads by name.
  Each part (a subpackage, or a module directly in ``skel_ros/``) may import only parts on
  the floors below its own (:data:`FLOORS`; fewer where :data:`ONLY` says so), and outside
  packages only where :data:`OUTSIDE` allows them. An import under ``TYPE_CHECKING`` never
  runs, but it counts the same: a lower floor that names an upper floor's types in its
  signatures depends on that floor's design (and a type checker resolves it there), so a
  type is named only where its module could be imported.
* **Runtime**: each ROS-free part is imported, module by module, in a fresh interpreter
  with the forbidden packages blocked in ``sys.modules`` (set to None, so any ``import``
  of them raises ImportError): what its modules pull in, transitively, when they load.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]
ROS = ["rclpy", "sensor_msgs", "geometry_msgs", "tf2_msgs", "std_msgs", "trajectory_msgs",
       "visualization_msgs", "rosgraph_msgs", "diagnostic_msgs", "std_srvs",
       "builtin_interfaces", "control_msgs"]

CHECK = """
import importlib, pkgutil, sys
for name in {blocked!r}:
    sys.modules[name] = None
import {package} as pkg
names = [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
for name in names:
    importlib.import_module(name)
leaked = sorted(n for n in {blocked!r} if sys.modules.get(n) is not None)
print(len(names), "modules", "leaked:", leaked)
assert not leaked
"""


def _run(package: str, blocked: list[str]) -> subprocess.CompletedProcess[str]:
    code = CHECK.format(package=package, blocked=blocked)
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize(
    ("package", "blocked"),
    [
        ("skel_ros.model", [*ROS, "dartpy", "mujoco"]),
        # The robot core knows backends only through RobotBackend: no engine, no bus.
        ("skel_ros.core", [*ROS, "dartpy", "skel_ros.sim", "skel_ros.hardware", "skel_ros.nodes",
                           "serial", "can"]),
        ("skel_ros.hardware", [*ROS, "dartpy", "skel_ros.sim"]),
        # dartpy is imported when a DART world is built (mujoco alone runs the other engine).
        ("skel_ros.sim", [*ROS, "skel_ros.hardware", "dartpy", "mujoco"]),
        ("skel_ros.trajectory", [*ROS, "dartpy"]),
        # Emulated devices: the protocols' codecs, never ROS (the nodes start them).
        ("skel_ros.emulation", [*ROS, "skel_ros.nodes", "skel_ros.cli", "skel_ros.physical"]),
        # Devices that move a physics model: an engine and the emulators, never ROS.
        ("skel_ros.physical", [*ROS, "skel_ros.nodes", "skel_ros.cli"]),
        ("skel_ros.analysis", [*ROS, "dartpy", "mujoco", "skel_ros.nodes", "skel_ros.sim",
                               "skel_ros.hardware"]),
    ],
)
def test_core_imports_without_forbidden_packages(package: str, blocked: list[str]) -> None:
    if not (REPO / package.replace(".", "/") / "__init__.py").exists():
        pytest.skip(f"{package} does not exist yet")
    result = _run(package, blocked)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "modules" in result.stdout


def test_blocking_works() -> None:
    """The check can fail: a module importing a blocked package is caught."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['numpy'] = None; import skel_ros.model"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode != 0
    assert "numpy" in result.stderr


def _private_imports(root: Path) -> list[str]:
    """``from skel_ros.x import _name`` across modules (a package's ``__init__`` may take
    the private names of its own submodules: it is their public face)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("skel_ros")):
                continue
            own = path.name == "__init__.py" and node.module.startswith(package + ".")
            found += [f"{path.relative_to(root.parent)}:{node.lineno} {node.module}.{a.name}"
                      for a in node.names if a.name.startswith("_") and not own]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    """A helper two modules share has one public home; nobody reaches into a private one."""
    assert _private_imports(REPO / "skel_ros") == []


def test_private_import_check_can_fail(tmp_path: Path) -> None:
    pkg = tmp_path / "skel_ros"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "__init__.py").write_text("from skel_ros.a.m import _ok\n")
    (pkg / "b.py").write_text("from skel_ros.a.m import _helper as helper\n")
    assert _private_imports(pkg) == ["skel_ros/b.py:1 skel_ros.a.m._helper"]


# --------------------------------------------------------------------------- static floors

#: The package's parts, floor by floor from the ground: a part imports only parts on the
#: floors below its own, never one beside it or above it (so no two parts can import each
#: other, directly or round a circle). docs/architecture.md#layers draws the same.
FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"resources", "child_process"}),                  # package:// files, children
    frozenset({"model"}),                                       # the robot model
    frozenset({"core", "trajectory", "mesh_uris", "ros2_control"}),
    frozenset({"sim", "hardware", "analysis"}),                 # engines, drivers, analysis
    frozenset({"emulation", "identify", "view", "sweep"}),      # emulated devices, tools
    frozenset({"physical"}),                                    # devices moving a physics model
    frozenset({"nodes"}),                                       # the only rclpy code
    frozenset({"cli"}),                                         # the skel-ros command
    frozenset({"__init__"}),                                    # skel_ros itself
)

#: Parts that may import fewer parts than their floor allows.
ONLY: dict[str, frozenset[str]] = {
    # Recordings are analysed without the robot stack: the model (names, YAML lines) and
    # the JointTrajectory parser the nodes use.
    "analysis": frozenset({"model", "trajectory"}),
    # ``import skel_ros`` imports none of its parts.
    "__init__": frozenset(),
}

_ROS = re.compile(r"rclpy|rcl_interfaces|builtin_interfaces|std_srvs|launch|launch_ros"
                  r"|ament_index_python|rosidl_\w+|\w+_msgs")

#: Outside packages (top-level module names) and the only parts that may import them.
OUTSIDE: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "ROS": (_ROS, frozenset({"nodes"})),
    "a physics engine": (re.compile(r"dartpy|mujoco"), frozenset({"sim"})),
    "a bus library": (re.compile(r"serial|can|canopen"), frozenset({"hardware", "emulation"})),
}

_REFERENCE = re.compile(r"skel_ros(?:\.\w+)+:\w+(?:\.\w+)*")  # a registry's "module:attribute"


class Import(NamedTuple):
    """One import: where it is written and what it names."""

    where: str          # "skel_ros/hardware/bus.py:12"
    part: str           # the importing part ("hardware")
    module: str         # the imported module ("skel_ros.cli.hardware_cmd", "can")
    type_only: bool     # under ``if TYPE_CHECKING:``


def _part(path: Path, root: Path) -> str:
    """The part a file of the package belongs to: its subpackage or its own module name."""
    return path.relative_to(root).parts[0].removesuffix(".py")


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                inside.update(id(n) for n in ast.walk(stmt))
    return inside


def _imported(node: ast.AST, package: list[str]) -> list[str]:
    """The modules an import statement (or a registry reference) names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if not node.level:
            return [str(node.module)]
        base = ".".join(package[:len(package) - node.level + 1])  # relative: from the package
        if node.module:
            return [f"{base}.{node.module}"]
        return [f"{base}.{alias.name}" for alias in node.names]
    if (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _REFERENCE.fullmatch(node.value)):
        return [node.value.partition(":")[0]]
    return []


def read_imports(root: Path) -> list[Import]:
    """Every import of every module under ``root`` (the package's directory)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = list(path.relative_to(root.parent).parts[:-1])
        type_only = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            where = f"{path.relative_to(root.parent)}:{getattr(node, 'lineno', 0)}"
            found += [Import(where, _part(path, root), module, id(node) in type_only)
                      for module in _imported(node, package)]
    return sorted(found, key=lambda imp: (imp.where.partition(":")[0],
                                          int(imp.where.partition(":")[2])))


def _floor(part: str) -> int:
    return next((i for i, parts in enumerate(FLOORS) if part in parts), -1)


def _check_part(imp: Import, target: str) -> str:
    """Why ``imp`` (of part ``target``, not its own) breaks the floors, or ""."""
    kind = " (under TYPE_CHECKING)" if imp.type_only else ""
    if _floor(target) < 0:
        return f"{imp.where}: {imp.module}: part {target!r} is on no floor (FLOORS)"
    if imp.part in ONLY and target not in ONLY[imp.part]:
        allowed = ", ".join(sorted(ONLY[imp.part])) or "nothing"
        return f"{imp.where}: {imp.part} imports {imp.module}{kind}; it may import only {allowed}"
    if _floor(target) >= _floor(imp.part):
        side = "beside" if _floor(target) == _floor(imp.part) else "above"
        return f"{imp.where}: {imp.part} imports {imp.module}{kind}, a part {side} its floor"
    return ""


def import_violations(root: Path) -> list[str]:
    """What breaks the floors, one line each (``file:line: ...``); [] when nothing does."""
    problems = []
    for imp in read_imports(root):
        names = imp.module.split(".")
        if _floor(imp.part) < 0:
            problems.append(f"{imp.where}: part {imp.part!r} is on no floor (FLOORS)")
        elif names[0] == root.name:
            target = names[1] if len(names) > 1 else "__init__"
            problem = _check_part(imp, target) if target != imp.part else ""
            problems += [problem] if problem else []
        else:
            kind = " (under TYPE_CHECKING)" if imp.type_only else ""
            problems += [f"{imp.where}: {imp.part} imports {imp.module}{kind} ({what}: only"
                         f" {', '.join(sorted(allowed))} may)"
                         for what, (pattern, allowed) in OUTSIDE.items()
                         if pattern.fullmatch(names[0]) and imp.part not in allowed]
    return problems


def part_circles(root: Path) -> list[list[str]]:
    """The circles in the graph of parts (a part -> the parts it imports)."""
    graph: dict[str, set[str]] = {}
    for imp in read_imports(root):
        names = imp.module.split(".")
        if names[0] == root.name and len(names) > 1 and names[1] != imp.part:
            graph.setdefault(imp.part, set()).add(names[1])
    circles: list[list[str]] = []
    done: set[str] = set()
    path: list[str] = []

    def visit(part: str) -> None:
        if part in path:
            circles.append([*path[path.index(part):], part])
            return
        if part in done:
            return
        path.append(part)
        for other in sorted(graph.get(part, ())):
            visit(other)
        path.pop()
        done.add(part)

    for part in sorted(graph):
        visit(part)
    return circles


def test_every_import_keeps_to_the_floors() -> None:
    """Module-level, lazy (in functions) and TYPE_CHECKING imports alike."""
    assert import_violations(REPO / "skel_ros") == []


def test_no_circle_between_parts() -> None:
    assert part_circles(REPO / "skel_ros") == []


def test_the_floors_say_what_the_architecture_promises() -> None:
    parts = {_part(p, REPO / "skel_ros") for p in (REPO / "skel_ros").rglob("*.py")}
    assert sorted(p for p in parts if _floor(p) < 0) == []
    assert _floor("core") == _floor("trajectory") > _floor("model")
    # hardware never imports sim, emulation, nodes or cli (nor dartpy or mujoco) ...
    assert all(_floor(p) >= _floor("hardware") for p in ("sim", "emulation", "nodes", "cli"))
    assert "hardware" not in OUTSIDE["a physics engine"][1]
    # ... and nothing but the physics-backed devices, the nodes and the command line
    # imports emulation (tests do too); the physics-backed devices stand above both the
    # engines and the emulators.
    above = {p for floor in FLOORS[_floor("emulation") + 1:] for p in floor}
    assert above - set(ONLY) == {"physical", "nodes", "cli"}
    assert _floor("physical") > max(_floor("sim"), _floor("emulation"))


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "skel_ros"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_static_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    """An import back up that runs only when a function is called (what the runtime check
    misses) is found, as are one under TYPE_CHECKING, a registry's string reference, a
    relative import, a forbidden outside package and a circle."""
    root = _tree(tmp_path, {
        "__init__.py": "",
        "cli/__init__.py": "",
        "cli/hardware_cmd.py": "def parse_ids(text): ...\n",
        "hardware/__init__.py": "",
        "hardware/bus.py": ("from typing import TYPE_CHECKING\n"
                            "if TYPE_CHECKING:\n"
                            "    from skel_ros.emulation.motor import MotorModel\n"
                            "TABLE = {'x': 'skel_ros.emulation.dynamixel:start'}\n"
                            "def main():\n"
                            "    from skel_ros.cli.hardware_cmd import parse_ids\n"
                            "    import dartpy\n"
                            "    return parse_ids('1')\n"),
        "hardware/ok.py": "from . import bus\nfrom skel_ros.model import load\n",
        "analysis/__init__.py": "from ..hardware import bus\n",
        "emulation/__init__.py": "",
        "emulation/motor.py": "import rclpy\n",
        "model/__init__.py": "",
    })
    assert import_violations(root) == [
        ("skel_ros/analysis/__init__.py:1: analysis imports skel_ros.hardware; it may import"
         " only model, trajectory"),
        "skel_ros/emulation/motor.py:1: emulation imports rclpy (ROS: only nodes may)",
        ("skel_ros/hardware/bus.py:3: hardware imports skel_ros.emulation.motor (under"
         " TYPE_CHECKING), a part above its floor"),
        ("skel_ros/hardware/bus.py:4: hardware imports skel_ros.emulation.dynamixel, a part"
         " above its floor"),
        ("skel_ros/hardware/bus.py:6: hardware imports skel_ros.cli.hardware_cmd, a part above"
         " its floor"),
        "skel_ros/hardware/bus.py:7: hardware imports dartpy (a physics engine: only sim may)",
    ]
    assert part_circles(root) == []
    (root / "model" / "__init__.py").write_text("from skel_ros.analysis import x\n",
                                                encoding="utf-8")
    assert part_circles(root) == [["analysis", "hardware", "model", "analysis"]]
