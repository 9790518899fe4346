"""Benchmark: how fast can Python build this model at all? A floor for bench/parse.py.

``floor_load`` reads a SKEL file the way the simplest possible parser would: lxml's
parse, one pass over the elements, ``float()`` of the numbers, and the same model
objects ``load_skel`` makes (bodies, inertias, box shapes, joints, DOFs, read-only
arrays, locations), built with the same fast constructors and the same float
arithmetic, and the same reuse within a document (a text's pose, box or COM, and the
moment of a body whose mass, COM, boxes and poses have the texts of an earlier body's,
are made once). It checks nothing, warns about nothing, de-duplicates no names and
reads only boxes and the joint elements the two small benchmark files use. It is not
a parser to use: it is the cost of the work no SKEL parser in Python can skip.

Printed per file, in the same run: DART's ``readWorld``, this floor, ``load_skel``,
and floor / DART. When floor / DART is above 1, ``load_skel`` cannot reach DART by
making its own code cheaper: only building fewer or cheaper objects than the model
holds would.

Usage: .venv/bin/python bench/parse_floor.py [--repeats N] [--loads K]
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))

from lxml import etree  # noqa: E402
from parse import sample_seconds  # noqa: E402 - bench/parse.py, timed the same way

from skel_ros.model.inertia import moment_from_rigid_shapes  # noqa: E402
from skel_ros.model.skel_parser import _DOF_DEFAULTS, _KINDS  # noqa: E402
from skel_ros.model.transforms import (  # noqa: E402
    RIGID_IDENTITY,
    Rigid,
    rigid_from_skel,
    rigid_inverse,
    rigid_mul,
    rigid_to_matrix,
)
from skel_ros.model.types import (  # noqa: E402
    IDENTITY4,
    ActuatorType,
    Body,
    Box,
    Dof,
    Inertia,
    Joint,
    Shape,
    ShapeRole,
    frozen_matrix3,
    frozen_vector3,
)
from skel_ros.model.xmlread import frozen_maker, new_location  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

_new_body = frozen_maker(Body)
_new_shape = frozen_maker(Shape)
_new_box = frozen_maker(Box)
_new_joint = frozen_maker(Joint)
_new_inertia = frozen_maker(Inertia)
_PARSER = etree.XMLParser(remove_blank_text=True, remove_comments=True, resolve_entities=False)
_ROLES = {"visualization_shape": ShapeRole.VISUAL, "collision_shape": ShapeRole.COLLISION}
_AXES = ("axis", "axis2", "axis3")
_IDENTITY9 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
_IDENTITY3 = frozen_matrix3(_IDENTITY9)


def _floats(el: Any) -> list[float]:  # noqa: ANN401 - an lxml element
    return list(map(float, el.text.split()))


class _Reuse:
    """What was made from a text, by the text (one per document)."""

    def __init__(self) -> None:
        self.rigids: dict[str, Rigid] = {}
        self.matrices: dict[str, Any] = {}
        self.vectors: dict[str, Any] = {}
        self.boxes: dict[str, Box] = {}
        self.moments: dict[tuple[str | None, ...], Any] = {}

    def rigid(self, el: Any) -> Rigid:  # noqa: ANN401 - an lxml element
        found = self.rigids.get(el.text)
        if found is None:
            found = self.rigids[el.text] = rigid_from_skel(_floats(el))
        return found

    def matrix(self, el: Any) -> Any:  # noqa: ANN401 - an lxml element, a numpy array
        found = self.matrices.get(el.text)
        if found is None:
            found = self.matrices[el.text] = rigid_to_matrix(self.rigid(el))
        return found

    def vector(self, el: Any) -> Any:  # noqa: ANN401 - an lxml element, a numpy array
        found = self.vectors.get(el.text)
        if found is None:
            found = self.vectors[el.text] = frozen_vector3(*_floats(el))
        return found

    def box(self, el: Any) -> Box:  # noqa: ANN401 - an lxml element
        found = self.boxes.get(el.text)
        if found is None:
            found = self.boxes[el.text] = _new_box(frozen_vector3(*_floats(el)))
        return found


def _body(
    b: Any, src: str, path: str, reuse: _Reuse  # noqa: ANN401 - an lxml element
) -> tuple[Rigid, Body]:
    kids: dict[str, Any] = {}
    shape_els = []
    for c in b:
        if c.tag in _ROLES:
            shape_els.append(c)
        kids.setdefault(c.tag, c)
    name = b.get("name")
    bpath = f"{path}/body[@name='{name}']"
    t = kids.get("transformation")
    rest = rigid_mul(RIGID_IDENTITY, RIGID_IDENTITY if t is None else reuse.rigid(t))
    mass, com, key = 1.0, frozen_vector3(0.0, 0.0, 0.0), [None, None]
    inertia = kids.get("inertia")
    if inertia is not None:
        ik = {c.tag: c for c in inertia}
        mass = float(ik["mass"].text)
        key = [ik["mass"].text, None]
        if "offset" in ik:
            com = reuse.vector(ik["offset"])
            key[1] = ik["offset"].text
    shapes, posed = [], []
    for c in shape_els:
        sk = {x.tag: x for x in c}
        size = sk["geometry"][0][0]
        box = reuse.box(size)
        tr = sk.get("transformation")
        pose = None if tr is None else reuse.rigid(tr)
        key += [size.text, None if tr is None else tr.text]
        shapes.append(_new_shape(
            f"{name} - shape", _ROLES[c.tag], box,
            IDENTITY4 if tr is None else reuse.matrix(tr), None, True,  # noqa: FBT003
            new_location(src, c.sourceline, f"{bpath}/{c.tag}"),
        ))
        posed.append((box, pose))
    moment = _IDENTITY3 if inertia is None else reuse.moments.get(tuple(key))
    if moment is None:
        values = moment_from_rigid_shapes(mass, com.tolist(), posed)
        moment = reuse.moments[tuple(key)] = frozen_matrix3(values or _IDENTITY9)
    body = _new_body(
        name, 0, "", _new_inertia(mass, com, moment, inertia is not None), True,  # noqa: FBT003
        rigid_to_matrix(rest), tuple(shapes), (), None, new_location(src, b.sourceline, bpath),
    )
    return rest, body


def _joint(
    j: Any,  # noqa: ANN401 - an lxml element
    rests: dict[str, Rigid],
    dofs: list[Dof],
    *,
    src: str,
    path: str,
    reuse: _Reuse,
) -> Joint:
    kids: dict[str, Any] = {}
    for c in j:
        kids.setdefault(c.tag, c)
    name, kind = j.get("name"), _KINDS[j.get("type")]
    parent, child = kids["parent"].text.strip(), kids["child"].text.strip()
    t = kids.get("transformation")
    c2j = RIGID_IDENTITY if t is None else reuse.rigid(t)
    world = rests.get(parent, RIGID_IDENTITY)
    t_parent = rigid_mul(rigid_mul(rigid_inverse(world), rests[child]), c2j)
    axes = [reuse.vector(kids[a][0]) for a in _AXES if a in kids]
    init = kids.get("init_pos")
    values = _floats(init) if init is not None else [0.0] * kind.num_dofs
    first = len(dofs)
    for k, value in enumerate(values):
        fields = _DOF_DEFAULTS.copy()
        fields.update(name=f"{name}_{k}", index=len(dofs), joint=name, index_in_joint=k,
                      initial_position=value)
        dof = object.__new__(Dof)
        object.__setattr__(dof, "__dict__", fields)
        dofs.append(dof)
    return _new_joint(
        name, kind.type, 0, parent, child, ActuatorType.FORCE, rigid_to_matrix(t_parent),
        IDENTITY4 if t is None else reuse.matrix(t), tuple(axes), 0.0, None, None, (),
        tuple(d.name for d in dofs[first:]), first, False,  # noqa: FBT003
        new_location(src, j.sourceline, f"{path}/joint[@name='{name}']"),
    )


def floor_load(file: Path) -> list[tuple[list[Body], list[Joint], list[Dof]]]:
    """The floor's model of ``file``: per skeleton, its bodies, joints and DOFs."""
    gc.disable()  # as load_skel does while it builds
    try:
        return _floor_load(file)
    finally:
        gc.enable()


def _floor_load(file: Path) -> list[tuple[list[Body], list[Joint], list[Dof]]]:
    src = str(file)
    root = etree.fromstring(file.read_bytes(), _PARSER)
    out = []
    reuse = _Reuse()
    for sk in root.find("world").iterchildren("skeleton"):
        path = f"/skel/world/skeleton[@name='{sk.get('name')}']"
        rests: dict[str, Rigid] = {}
        bodies: list[Body] = []
        dofs: list[Dof] = []
        for b in sk.iterchildren("body"):
            rest, body = _body(b, src, path, reuse)
            rests[body.name] = rest
            bodies.append(body)
        joints = [
            _joint(j, rests, dofs, src=src, path=path, reuse=reuse)
            for j in sk.iterchildren("joint")
        ]
        out.append((bodies, joints, dofs))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="samples per side and file")
    parser.add_argument("--loads", type=int, default=3, help="loads per sample")
    args = parser.parse_args()

    import dartpy

    from skel_ros.model import load_skel

    files = [
        CORPUS / "data/skel/fullbody1.skel",
        CORPUS / "data/skel/test/serial_chain_ball_joint_40.skel",
    ]
    print(f"{'file':<34} {'DART ms':>8} {'floor ms':>9} {'ours ms':>8} {'floor/DART':>11}")
    for f in files:
        runs: dict[str, Callable[[], object]] = {
            "dart": functools.partial(dartpy.utils.SkelParser.readWorld, str(f)),
            "floor": functools.partial(floor_load, f),
            "ours": functools.partial(load_skel, f),
        }
        # The floor builds what load_skel builds: same counts of bodies, shapes, DOFs.
        model = load_skel(f)
        for (bodies, joints, dofs), skel in zip(floor_load(f), model.skeletons, strict=True):
            assert len(bodies) == len(skel.bodies)
            assert len(joints) == len(skel.joints)
            assert len(dofs) == len(skel.dofs)
            assert sum(len(b.shapes) for b in bodies) == sum(len(b.shapes) for b in skel.bodies)
        times: dict[str, list[float]] = {k: [] for k in runs}
        for fn in runs.values():
            fn()  # warm-up
        for _ in range(args.repeats):
            for key, fn in runs.items():
                times[key].append(sample_seconds(fn, args.loads))
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        print(f"{f.name:<34} {med['dart']:>8.2f} {med['floor']:>9.2f} {med['ours']:>8.2f}"
              f" {med['floor'] / med['dart']:>11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
