"""Errors of the model interchange formats (Phobos dictionaries, CASPR XML, SKEL writer).

All are :class:`~skel_ros.model.errors.SkelError` subclasses, so a caller that
handles ``SkelError`` around :func:`~skel_ros.model.formats.load_model` handles
every format; each carries a :class:`~skel_ros.model.errors.Location` with the
file, the line (0 when the format has none, e.g. JSON values) and the element
path (an XPath-like path for XML, a key path such as ``/joints/j1/limits/lower``
for Phobos dictionaries)::

    SkelError
    └── InterchangeError
        ├── UnknownFormatError   content that is none of the formats load_model reads
        ├── PhobosError          a Phobos dictionary that cannot become a model
        ├── CasprError           a CASPR bodies / cables / operational-space file
        ├── UrdfError            a URDF / xacro / SMURF file that cannot become a model
        └── ExportError          a model that the chosen target format cannot hold
"""

from __future__ import annotations

from skel_ros.model.errors import SkelError


class InterchangeError(SkelError):
    """A model file of another format that cannot be read, or a model that cannot be written."""


class UnknownFormatError(InterchangeError):
    """The content is not SKEL, CASPR XML or a Phobos dictionary."""


class PhobosError(InterchangeError):
    """A Phobos dictionary (YAML or JSON) that does not describe a loadable model."""


class CasprError(InterchangeError):
    """A CASPR ``bodies.xml`` / ``cables.xml`` / operational-space file that cannot be read."""


class UrdfError(InterchangeError):
    """A URDF, xacro or SMURF file that does not describe a loadable model."""


class ExportError(InterchangeError):
    """The model holds something the target format cannot express."""
