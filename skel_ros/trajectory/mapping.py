"""Which column of a CASPR ``q`` vector drives which DOF of the model.

Without a mapping file the columns map to the model's DOFs in order. A mapping
file is YAML, either

* a list of DOF names, one per ``q`` column (``null`` skips a column)::

      [shoulder_yaw, shoulder_pitch, elbow, wrist]

* or a map from 0-based ``q`` column index to DOF name (other columns are skipped)::

      {0: shoulder_yaw, 2: elbow}

``skel-ros convert`` writes such a list beside a model it converts from a CASPR
``bodies.xml``, at :func:`q_mapping_path` (``<model file>.q_mapping.yaml``); the loader
uses the one found there when no mapping is given (:mod:`skel_ros.trajectory.loader`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from skel_ros.model.errors import Location
from skel_ros.model.yamlread import compose_yaml
from skel_ros.trajectory.errors import TrajectoryFileError, TrajectoryMappingError

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

__all__ = ["Q_MAPPING_SUFFIX", "DofMapping", "MappedColumn", "load_mapping", "parse_mapping",
           "q_mapping_path", "resolve_columns"]

Q_MAPPING_SUFFIX = ".q_mapping.yaml"

_NULL = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_STR = "tag:yaml.org,2002:str"
_MAX_COLUMN = 100_000


@dataclass(frozen=True)
class MappedColumn:
    """One column of the ``q`` vector and the DOF it drives.

    Attributes:
        column: 0-based index into ``q``.
        dof: The model's DOF name.
        location: Where the mapping file says so (None when mapped by order).
    """

    column: int
    dof: str
    location: Location | None = None


@dataclass(frozen=True)
class DofMapping:
    """A parsed mapping file.

    Attributes:
        columns: The mapped columns, in file order.
        location: The file (and line of its top-level node).
        list_length: Entries of the list form, nulls included (it must equal the ``q``
            length); None for the map form.
    """

    columns: tuple[MappedColumn, ...]
    location: Location
    list_length: int | None


def q_mapping_path(model: str | os.PathLike[str]) -> Path:
    """Where the q mapping of ``model`` is: ``<model file name>.q_mapping.yaml`` beside it.

    ``skel-ros convert`` writes it there for a model converted from CASPR, and
    :func:`~skel_ros.trajectory.loader.load_trajectory_model` looks for it there.
    """
    path = Path(model)
    return path.with_name(path.name + Q_MAPPING_SUFFIX)


def load_mapping(path: str | Path) -> DofMapping:
    """Read a mapping file (module docstring).

    Raises:
        TrajectoryFileError: The file cannot be read or is not a mapping of the forms above.
    """
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise TrajectoryFileError(f"cannot read mapping file: {exc.strerror or exc}",
                                  Location(str(path))) from None
    return parse_mapping(text, str(path))


def _loc(source: str, node: yaml.Node, path: str) -> Location:
    return Location(source, node.start_mark.line + 1, path)


def parse_mapping(text: bytes | str, source: str = "<mapping>") -> DofMapping:
    """Parse mapping YAML ``text``; ``source`` names it in errors.

    Raises:
        TrajectoryFileError: Malformed YAML or not one of the two forms.
    """
    try:
        root = compose_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        raise TrajectoryFileError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                                  Location(source, line)) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise TrajectoryFileError(f"not valid YAML: {exc}", Location(source)) from None
    if root is None:
        raise TrajectoryFileError("the mapping file is empty", Location(source))
    where = _loc(source, root, "/")
    if isinstance(root, yaml.SequenceNode):
        columns = _list_columns(source, root)
    elif isinstance(root, yaml.MappingNode):
        columns = _map_columns(source, root)
    else:
        raise TrajectoryFileError("a mapping file holds a list of DOF names or a map"
                                  " {q column index: DOF name}", where)
    seen: dict[str, int] = {}
    for col in columns:
        if col.dof in seen:
            raise TrajectoryFileError(f"DOF {col.dof!r} is mapped from q columns"
                                      f" {seen[col.dof]} and {col.column}", col.location)
        seen[col.dof] = col.column
    if not columns:
        raise TrajectoryFileError("the mapping maps no column to a DOF", where)
    length = len(root.value) if isinstance(root, yaml.SequenceNode) else None
    return DofMapping(tuple(columns), where, length)


def _list_columns(source: str, root: yaml.SequenceNode) -> list[MappedColumn]:
    columns = []
    for i, node in enumerate(root.value):
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL:
            continue
        columns.append(MappedColumn(i, _name(source, node, f"/[{i}]"),
                                    _loc(source, node, f"/[{i}]")))
    return columns


def _map_columns(source: str, root: yaml.MappingNode) -> list[MappedColumn]:
    columns = []
    used: set[int] = set()
    for key, node in root.value:
        if not (isinstance(key, yaml.ScalarNode) and key.tag == _INT):
            raise TrajectoryFileError(
                f"key {getattr(key, 'value', key)!r} is not a q column index (an integer"
                f" from 0)", _loc(source, key, "/"))
        try:
            column = int(key.value.replace("_", ""), 0)
        except ValueError:
            column = -1
        if not 0 <= column <= _MAX_COLUMN:
            raise TrajectoryFileError(f"q column index {key.value} must be between 0 and"
                                      f" {_MAX_COLUMN}", _loc(source, key, "/"))
        if column in used:
            raise TrajectoryFileError(f"q column {column} is mapped twice",
                                      _loc(source, key, f"/{column}"))
        used.add(column)
        columns.append(MappedColumn(column, _name(source, node, f"/{column}"),
                                    _loc(source, node, f"/{column}")))
    return columns


def _name(source: str, node: yaml.Node, path: str) -> str:
    if not (isinstance(node, yaml.ScalarNode) and node.tag == _STR and node.value.strip()):
        raise TrajectoryFileError(f"expected a DOF name, got {getattr(node, 'value', node)!r}"
                                  if isinstance(node, yaml.ScalarNode)
                                  else "expected a DOF name, got a list or map",
                                  _loc(source, node, path))
    return str(node.value).strip()


def resolve_columns(n_columns: int, model_dof_names: Sequence[str] | None,
                    mapping: DofMapping | None, where: Location) -> tuple[MappedColumn, ...]:
    """The columns of a ``q`` vector of ``n_columns`` values and the DOFs they drive.

    Args:
        n_columns: Length of the trajectory's ``q`` vectors.
        model_dof_names: The model's (public) DOF names; None accepts any name.
        mapping: A mapping file, or None to map by order.
        where: The trajectory, for messages.

    Raises:
        TrajectoryMappingError: Counts differ, a column is out of range or a DOF is unknown.
    """
    if mapping is None:
        if model_dof_names is None:
            raise TrajectoryMappingError("the trajectory's q vectors carry no DOF names: give"
                                         " the model or a mapping file", where)
        names = list(model_dof_names)
        if n_columns != len(names):
            raise TrajectoryMappingError(
                f"q has {n_columns} values but the model has {len(names)} DOFs"
                f" ({', '.join(names)}); give a mapping file to say which q value drives"
                f" which DOF", where)
        return tuple(MappedColumn(i, n) for i, n in enumerate(names))
    if mapping.list_length is not None and mapping.list_length != n_columns:
        raise TrajectoryMappingError(
            f"the mapping list has {mapping.list_length} entries but q has {n_columns}"
            f" values (use null for a q value that drives no DOF)", mapping.location)
    known = set(model_dof_names) if model_dof_names is not None else None
    for col in mapping.columns:
        if col.column >= n_columns:
            raise TrajectoryMappingError(f"q column {col.column} does not exist: q has"
                                         f" {n_columns} values (indices from 0)", col.location)
        if known is not None and col.dof not in known:
            raise TrajectoryMappingError(
                f"unknown DOF {col.dof!r}; the model's DOFs are"
                f" {', '.join(model_dof_names or ())}", col.location)
    return mapping.columns

