"""Load a model from any supported format, chosen by the file's content.

:func:`load_model` reads SKEL (root ``<skel>``), CASPR bodies (root
``<bodies_system>``) and Phobos dictionaries (YAML or JSON with ``links`` /
``joints``, or the ``models`` envelope written for several skeletons), URDF
(root ``<robot>``; xacro documents are expanded first) and SMURF indexes (YAML
with ``SMURF version`` / ``files``). The file extension is never consulted
(except ``.xacro``, which also marks a xacro document): a Phobos YAML called
``robot.skel`` loads as Phobos, a SKEL file called ``robot.yaml`` as SKEL.
Formats it recognises but does not read (CASPR cables, SDF) are refused with
words that name the format and say what to do.

Every failure is a :class:`~skel_ros.model.errors.SkelError` with file:line and
element (or key) path; content that is none of the formats is an
:class:`~skel_ros.model.interchange_errors.UnknownFormatError`.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from skel_ros.model.caspr_model import load_caspr_bodies
from skel_ros.model.errors import Location, SkelError
from skel_ros.model.interchange_errors import UnknownFormatError
from skel_ros.model.phobos import looks_like_phobos, parse_phobos_text, phobos_to_world
from skel_ros.model.skel_parser import load_skel
from skel_ros.model.smurf import is_smurf, load_smurf, smurf_to_world
from skel_ros.model.urdf_reader import urdf_to_world

if TYPE_CHECKING:
    from skel_ros.model.types import World

__all__ = ["ModelFormat", "detect_format", "load_model"]

_MAX_BYTES = 256 * 1024 * 1024
_PROLOG = re.compile(
    rb"\A(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)*<([A-Za-z_][\w.\-]*)",
    re.DOTALL,
)
_LEGACY = re.compile(rb"\A\s*dofs\s*\{")
_SKEL_ELEMENT = re.compile(rb"<\s*skel[\s/>]")


class ModelFormat(enum.Enum):
    """The formats :func:`load_model` reads (and ``UNKNOWN``)."""

    SKEL = "skel"
    CASPR_BODIES = "caspr-bodies"
    CASPR_CABLES = "caspr-cables"
    PHOBOS = "phobos"
    URDF = "urdf"
    SDF = "sdf"
    UNKNOWN = "unknown"


# Root elements of XML formats that are recognised but not read.
_XML_ROOTS = {
    "skel": ModelFormat.SKEL,
    "bodies_system": ModelFormat.CASPR_BODIES,
    "cables": ModelFormat.CASPR_CABLES,
    "robot": ModelFormat.URDF,
    "sdf": ModelFormat.SDF,
}

_CONVERT_HINT = (
    "convert the model to SKEL (<skel>) or to a Phobos dictionary (YAML or JSON with"
    " 'links' and 'joints') and load that")

# Formats that are recognised and refused: (reason, hint).
_UNREAD = {
    ModelFormat.CASPR_CABLES: (
        "this is a CASPR cables file; it describes cables, not bodies",
        "load the matching *_bodies.xml (and read the cables with load_caspr_cables)"),
    ModelFormat.SDF: (
        "this is an SDF file (root <sdf>); reading SDF is not supported", _CONVERT_HINT),
}


def _is_text(source: object) -> bool:
    if not isinstance(source, str):
        return False
    stripped = source.lstrip("\ufeff \t\r\n")
    return stripped.startswith(("<", "{", "[")) or "\n" in source or not stripped


def detect_format(data: bytes) -> ModelFormat:
    """The format of a document's bytes, from its content only."""
    body = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    if body.startswith(b"<"):
        m = _PROLOG.match(body[:65536])
        tag = m.group(1).decode("ascii", "replace") if m else ""
        fmt = _XML_ROOTS.get(tag, ModelFormat.UNKNOWN)
        if fmt is ModelFormat.UNKNOWN and _SKEL_ELEMENT.search(body):
            return ModelFormat.SKEL  # DART reads the first top-level <skel> after others
        return fmt
    if _LEGACY.match(body):
        return ModelFormat.SKEL  # load_skel explains the legacy format
    if not body:
        return ModelFormat.UNKNOWN
    return ModelFormat.PHOBOS  # confirmed (or refuted) once parsed


def load_model(source: str | os.PathLike[str], *, name: str | None = None,  # noqa: C901, PLR0912
               xacro_args: Mapping[str, str] | None = None, fixed_base: bool = False) -> World:
    """Read a model in any supported format (SKEL, CASPR bodies, Phobos, URDF/xacro, SMURF).

    Args:
        source: A file path, or the document text (XML, JSON or multi-line YAML).
        name: Name used in messages for text; also the base for relative mesh paths.
        xacro_args: ``name:=value`` arguments of a xacro document (an error for any
            other format).
        fixed_base: URDF / SMURF: weld the root link to the world instead of giving it
            a floating joint (:mod:`skel_ros.model.urdf_reader`); ignored otherwise.

    Returns:
        The model.

    Raises:
        SkelError: Any failure, with file:line and element path;
            ``UnknownFormatError`` for content that is none of the formats.
    """
    text_input = _is_text(source)
    label = name or ("<string>" if text_input else os.fspath(source))
    if text_input:
        data = str(source).encode("utf-8", "surrogatepass")
        path = None
    else:
        path = Path(os.fspath(source))
        try:
            st = path.stat()  # a missing file: OSError below, with its reason
            if not path.is_file():
                raise UnknownFormatError("cannot read file: not a regular file",
                                         Location(label))
            if st.st_size > _MAX_BYTES:
                raise UnknownFormatError("file is too large", Location(label))
            data = path.read_bytes()
        except OSError as exc:
            raise UnknownFormatError(f"cannot read file: {exc.strerror or exc}",
                                     Location(label)) from None
        except ValueError as exc:
            raise UnknownFormatError(f"cannot read file: {exc}", Location(label)) from None
    fmt = detect_format(data)
    if xacro_args and fmt is not ModelFormat.URDF:
        raise UnknownFormatError(f"xacro arguments given for a {fmt.value} document",
                                 Location(label), "xacro arguments are for .xacro files")
    if fmt is ModelFormat.URDF:
        if path is not None:
            base: Path | None = path.resolve().parent
        else:
            base = Path(name).resolve().parent if name else None
        return urdf_to_world(data, label=label, base_dir=base, xacro_args=xacro_args,
                             fixed_base=fixed_base)
    if fmt is ModelFormat.SKEL:
        return load_skel(path if path is not None else str(source), name=name)
    if fmt is ModelFormat.CASPR_BODIES:
        ops = None
        if path is not None and path.name.endswith("_bodies.xml"):
            sibling = path.with_name(path.name[: -len("_bodies.xml")] + "_operational_spaces.xml")
            ops = sibling if sibling.is_file() else None
        src = path if path is not None else str(source)
        return load_caspr_bodies(src, operational_spaces=ops, name=name).world
    unread = _UNREAD.get(fmt)
    if unread is not None:
        reason, hint = unread
        raise UnknownFormatError(reason, Location(label, _root_line(data)), hint)
    if fmt is ModelFormat.PHOBOS:
        return _load_phobos(data, label, path, name, fixed_base=fixed_base)
    raise UnknownFormatError(
        "not a SKEL, CASPR bodies or Phobos document", Location(label, 1 if data else 0),
        "SKEL starts with <skel>, CASPR bodies with <bodies_system>; a Phobos dictionary is"
        " YAML or JSON with 'links' and 'joints'")


def _root_line(data: bytes) -> int:
    """The line of the root element's start tag (1 when it cannot be found)."""
    body = data.removeprefix(b"\xef\xbb\xbf")
    stripped = body.lstrip()
    m = _PROLOG.match(stripped[:65536])
    if m is None:
        return 1
    return body[: len(body) - len(stripped) + m.start(1)].count(b"\n") + 1


def _load_phobos(data: bytes, label: str, path: Path | None, name: str | None, *,
                 fixed_base: bool) -> World:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnknownFormatError(f"not a text document (bad UTF-8 at byte {exc.start})",
                                 Location(label)) from None
    try:
        value, lines = parse_phobos_text(text, label)
    except SkelError as exc:
        raise UnknownFormatError(
            f"not a SKEL, CASPR bodies or Phobos document ({exc.reason})", exc.location,
        ) from None
    if is_smurf(value) and not looks_like_phobos(value):
        if path is not None:  # read again for the lines of its keys
            return load_smurf(path, fixed_base=fixed_base)
        return smurf_to_world(value, label=label, base_dir=Path(name or ".").resolve().parent,
                              fixed_base=fixed_base)
    if not looks_like_phobos(value):
        _refuse_other_yaml(value, label, lines)
    if path is not None:
        base: Path | None = path.resolve().parent
    else:
        base = Path(name).parent if name else None
    return phobos_to_world(value, source=label, base_dir=base, lines=lines)


def _refuse_other_yaml(value: object, label: str, lines: Mapping[str, int]) -> NoReturn:
    """Raise the error for parsed YAML/JSON that is not a Phobos dictionary, naming what it is."""
    if isinstance(value, Mapping) and isinstance(value.get("models"), list) \
            and "skel" not in value:
        raise UnknownFormatError(
            "a 'models' list without the 'skel' key that skel-ros writes beside it"
            " (the world's physics); this envelope is skel-ros's own, not Phobos's",
            Location(label, lines.get("/models", 1)),
            "add 'skel: {world: {}}' at the top level for DART's default physics, or"
            " load each model (a dictionary with 'links' and 'joints') as its own file")
    raise UnknownFormatError(
        "YAML/JSON without the 'links' and 'joints' of a Phobos dictionary",
        Location(label, 1))
