"""``load_trajectory``: one entry point for every trajectory file format.

The reader is chosen by content, not by file name: a document whose first
non-blank character is ``<`` is XML and must be a CASPR ``<trajectories>``
file; anything else is read as trajectory YAML.

``load_trajectory_model`` reads the model a trajectory is played against (any
file :func:`~skel_ros.model.load_model` reads) with the DOF each CASPR ``q``
column drives:

* a CASPR ``bodies.xml``: CASPR's own order
  (:attr:`~skel_ros.model.caspr_model.CasprBodies.q_dofs`);
* a model with a mapping file beside it (``<model>.q_mapping.yaml``, which
  ``skel-ros convert`` writes for a model it converts from CASPR): that file's;
* any other model: the model's DOF order, unless it has a joint whose DOF order is
  not CASPR's order for the same joint (planar zx: CASPR's ``PLANAR_XZ``; euler zyx:
  CASPR's ``S_FIXED_XYZ``). Such a model may have been converted from CASPR, and its
  column order cannot be told: a CASPR trajectory is refused on it without a mapping
  file, rather than played with columns swapped.

Give ``load_trajectory`` the :class:`TrajectoryModel` itself for these rules; a mapping
file given to it overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from skel_ros.model.caspr_model import load_caspr_bodies
from skel_ros.model.errors import Location
from skel_ros.model.formats import ModelFormat, detect_format, load_model
from skel_ros.model.joint_types import EulerOrder, JointType, PlaneType
from skel_ros.model.urdf import skeleton_namespace
from skel_ros.trajectory.caspr import select_caspr
from skel_ros.trajectory.errors import TrajectoryFileError, TrajectoryMappingError
from skel_ros.trajectory.limits import DofLimits, model_limits
from skel_ros.trajectory.mapping import DofMapping, load_mapping, q_mapping_path, resolve_columns
from skel_ros.trajectory.yaml_file import parse_trajectory_yaml

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.model.types import World
    from skel_ros.trajectory.points import PointTrajectory

__all__ = ["TrajectoryFormat", "TrajectoryModel", "load_trajectory", "load_trajectory_model",
           "sniff_format"]

TrajectoryFormat = Literal["caspr", "yaml"]


def sniff_format(data: bytes) -> TrajectoryFormat:
    """``"caspr"`` for XML content, ``"yaml"`` otherwise."""
    head = data.lstrip(b"\xef\xbb\xbf").lstrip()
    return "caspr" if head.startswith(b"<") else "yaml"


@dataclass(frozen=True)
class TrajectoryModel:
    """The model a trajectory is played against.

    Attributes:
        world: The model.
        limits: Every DOF's limits by public name, in DOF order (:func:`model_limits`).
        q_columns: The public DOF name each CASPR ``q`` column drives, in ``q`` order:
            CASPR's order for a CASPR ``bodies.xml`` (it differs from the DOF order
            for ``PLANAR_XZ`` and ``S_FIXED_XYZ`` joints), the DOF order otherwise.
        q_mapping_file: The mapping file found beside the model
            (:func:`~skel_ros.trajectory.mapping.q_mapping_path`), used for CASPR
            trajectories instead of ``q_columns`` when no mapping is given; None if none.
        q_order_unknown: Why a CASPR trajectory's columns cannot be mapped in
            ``q_columns`` order on this model (a joint whose DOF order differs from
            CASPR's, no mapping file beside it); empty when they can.

    Pass it as ``load_trajectory``'s ``model_dof_names``: a CASPR trajectory is then
    mapped by ``q_mapping_file``, or refused for ``q_order_unknown``, unless a mapping is
    given.
    """

    world: World
    limits: dict[str, DofLimits]
    q_columns: tuple[str, ...]
    q_mapping_file: Path | None = None
    q_order_unknown: str = ""


def load_trajectory_model(path: str | os.PathLike[str], *,
                          xacro_args: Mapping[str, str] | None = None,
                          fixed_base: bool = False) -> TrajectoryModel:
    """Read any model file :func:`~skel_ros.model.load_model` reads, with its CASPR columns.

    Args:
        path: The model file (a path, not the document's text).
        xacro_args: A ``.xacro`` model's arguments.
        fixed_base: URDF/SMURF: weld the root link to the world.

    Raises:
        SkelError: The model cannot be read (file:line).
        TrajectoryError: Two DOFs would have the same public name, or ``path`` is not a
            readable file.
    """
    world = load_model(path, xacro_args=xacro_args or None, fixed_base=fixed_base)
    limits = model_limits(world)
    columns = tuple(limits)
    try:
        data = Path(path).read_bytes()  # load_model read it (and bounded its size)
    except OSError as exc:  # not a file (model text?): its q columns cannot be told
        raise TrajectoryFileError(f"cannot read model file: {exc.strerror or exc}",
                                  Location(str(path))) from None
    if detect_format(data) is ModelFormat.CASPR_BODIES:
        bodies = load_caspr_bodies(path)
        prefix = skeleton_namespace(world, world.skeletons[0])
        return TrajectoryModel(world, limits, tuple(prefix + name for name in bodies.q_dofs))
    beside = q_mapping_path(path)
    if beside.is_file():  # read when a CASPR trajectory needs it: YAML ones never do
        return TrajectoryModel(world, limits, columns, q_mapping_file=beside)
    return TrajectoryModel(world, limits, columns, q_order_unknown=_q_order_unknown(world))


def _q_order_unknown(world: World) -> str:
    """Why CASPR ``q`` columns cannot be taken in DOF order on ``world`` ("" if they can).

    CASPR's ``PLANAR_XZ`` and ``S_FIXED_XYZ`` become a planar zx and an euler zyx joint
    whose DOF order is not CASPR's ``q`` order (:mod:`skel_ros.model.caspr_model`); a
    model holding one may be a conversion of a CASPR model, for which the DOF order
    would move the wrong DOFs.
    """
    for skeleton in world.skeletons:
        for joint in skeleton.joints:
            if joint.type is JointType.PLANAR and joint.plane is PlaneType.ZX:
                why = ("planar zx: DOFs (z, x, theta), where CASPR's PLANAR_XZ q is"
                       " (x, z, theta)")
            elif joint.type is JointType.EULER and joint.euler_order is EulerOrder.ZYX:
                why = ("euler zyx: DOFs (gamma, beta, alpha), where CASPR's S_FIXED_XYZ q is"
                       " (alpha, beta, gamma)")
            else:
                continue
            where = Location(joint.location.file or world.source, joint.location.line)
            return f"joint {joint.name!r} ({where}) is {why}"
    return ""


def load_trajectory(path: str | Path,
                    model_dof_names: TrajectoryModel | Sequence[str] | None,
                    mapping: str | Path | DofMapping | None = None, *,
                    trajectory_id: str | None = None,
                    on_note: Callable[[str], None] | None = None) -> PointTrajectory:
    """Read a CASPR ``trajectories.xml`` or a trajectory YAML file.

    Args:
        path: The trajectory file.
        model_dof_names: The model (:func:`load_trajectory_model`): CASPR ``q``
            columns map as the module docstring says (without a mapping), and every
            joint must be one of its DOFs. Or the model's (public) DOF names: CASPR
            ``q`` columns map to them in order (without a mapping). None skips the name
            check (YAML only; CASPR then needs a mapping).
        mapping: A mapping file (or a parsed one) for CASPR ``q`` columns.
        trajectory_id: Which CASPR joint trajectory of the file (default: the first);
            only that one is read.
        on_note: Called with each located note on what was read but ignored (a CASPR
            trajectory's ``<description>``), and on the mapping file found beside the
            model when one is used; for verbose output.

    Returns:
        The trajectory on the model's DOF names; CASPR trajectories are sampled at
        their ``time_step`` (with CASPR's velocities and accelerations at each sample).

    Raises:
        TrajectoryFileError: A file cannot be read or is malformed (file:line).
        TrajectoryMappingError: Columns or joints that are not the model's DOFs, or a
            CASPR trajectory on a model whose column order is unknown
            (``TrajectoryModel.q_order_unknown``) without a mapping.
    """
    model = model_dof_names if isinstance(model_dof_names, TrajectoryModel) else None
    if model is not None:
        model_dof_names = model.q_columns
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TrajectoryFileError(f"cannot read trajectory file: {exc.strerror or exc}",
                                  Location(str(path))) from None
    source = str(path)
    if sniff_format(data) == "caspr":
        return _load_caspr(data, source, model, model_dof_names, mapping,
                           trajectory_id=trajectory_id, on_note=on_note)
    if mapping is not None:
        raise TrajectoryMappingError("a mapping file applies to CASPR trajectories only; a"
                                     " trajectory YAML names its joints", Location(source))
    if trajectory_id is not None:
        raise TrajectoryFileError("trajectory_id selects a CASPR trajectory; this is a"
                                  " trajectory YAML", Location(source))
    trajectory = parse_trajectory_yaml(data, source)
    if model_dof_names is not None:
        known = set(model_dof_names)
        unknown = [n for n in trajectory.joint_names if n not in known]
        if unknown:
            line = _joint_names_line(data)
            raise TrajectoryMappingError(
                f"unknown DOF(s) {', '.join(map(repr, unknown))} in joint_names; the model's"
                f" DOFs are {', '.join(model_dof_names)}", Location(source, line, "/joint_names"))
    return trajectory


def _load_caspr(data: bytes, source: str, model: TrajectoryModel | None,
                model_dof_names: Sequence[str] | None,
                mapping: str | Path | DofMapping | None, *, trajectory_id: str | None,
                on_note: Callable[[str], None] | None) -> PointTrajectory:
    """``load_trajectory`` of a CASPR file's content."""
    chosen = select_caspr(data, source, trajectory_id)
    if on_note is not None:
        for note in chosen.notes:
            on_note(note)
    if mapping is None and model is not None:
        mapping = _model_mapping(model, chosen.location, on_note)
    parsed = load_mapping(mapping) if isinstance(mapping, (str, Path)) else mapping
    columns = resolve_columns(chosen.num_q, model_dof_names, parsed, chosen.location)
    return chosen.to_point_trajectory(columns)


def _model_mapping(model: TrajectoryModel, where: Location,
                   on_note: Callable[[str], None] | None) -> Path | None:
    """The mapping file a CASPR trajectory (at ``where``) takes on ``model`` when none is given.

    Raises:
        TrajectoryMappingError: The model's column order is unknown.
    """
    if model.q_mapping_file is not None and on_note is not None:
        on_note(f"{where}: q columns mapped to DOFs by {model.q_mapping_file}, found beside"
                " the model")
    if model.q_order_unknown:
        raise TrajectoryMappingError(
            f"cannot tell which DOF each q column drives: {model.q_order_unknown}, so the"
            " model may be a conversion of a CASPR model whose q order is not its DOF order;"
            " give a mapping file (skel-ros convert writes <model>.q_mapping.yaml beside a"
            " model it converts from CASPR, and it is used when found there), or play"
            " against the CASPR bodies.xml", where)
    return model.q_mapping_file


def _joint_names_line(data: bytes) -> int:
    for number, line in enumerate(data.splitlines(), start=1):
        if line.lstrip().startswith(b"joint_names"):
            return number
    return 0
