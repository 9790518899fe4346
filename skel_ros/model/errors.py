"""Errors and warnings raised while reading robot models.

Every error names the file, the line and the element path it comes from, so a
user can go straight to the offending XML. The tree::

    SkelError
    ├── SkelSyntaxError        not well-formed XML / not a SKEL document
    ├── SkelLegacyFormatError  a pre-XML DART ``.skel`` text file
    ├── SkelMissingElementError  a required element or attribute is absent
    ├── SkelValueError         text that is not the number / vector / flag expected
    ├── SkelReferenceError     a name that refers to nothing (or to itself)
    └── SkelUnsupportedError   input DART itself cannot build (it would crash or hang)

The YAML files beside a model (limit overrides, truth files, sweep specs) raise subclasses
of :class:`FileLineError` (``file.yaml:12: message``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where something is in a source file.

    Attributes:
        file: File name (or the name given to an XML string).
        line: 1-based line number, 0 when unknown.
        path: XPath-like element path, e.g. ``/skel/world/skeleton[@name='arm']/joint[@name='j1']``.
    """

    file: str
    line: int = 0
    path: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}" if self.path else where


class FileLineError(ValueError):
    """A configuration file that cannot be used, said ``file.yaml:12: message``.

    The base of the YAML readers' errors (limit overrides, truth files, sweep specs): one
    way to carry and say where the problem is.

    Attributes:
        source: the file (or the name given to the text); may be empty.
        line: 1-based line, 0 when unknown.
        message: the problem, without the location.
    """

    def __init__(self, message: str, source: str = "", line: int = 0) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if source and line else source
        super().__init__(f"{where}: {message}" if where else message)


class SkelError(Exception):
    """Any problem that prevents a model file from being loaded.

    Attributes:
        location: Where the problem is.
        reason: The message without the location.
        hint: An optional suggestion for fixing it.
    """

    def __init__(self, reason: str, location: Location, hint: str = "") -> None:
        self.reason = reason
        self.location = location
        self.hint = hint
        text = f"{location}: {reason}"
        if hint:
            text += f" (hint: {hint})"
        super().__init__(text)


class SkelSyntaxError(SkelError):
    """The bytes are not well-formed XML or not a SKEL document."""


class SkelLegacyFormatError(SkelError):
    """A legacy pre-XML DART ``.skel`` text file (``dofs { ... }``)."""


class SkelMissingElementError(SkelError):
    """A required element or attribute is absent."""


class SkelValueError(SkelError):
    """Text that does not hold the number, vector or flag expected."""


class SkelReferenceError(SkelError):
    """A name that refers to nothing, or a loop in the joint tree."""


class SkelUnsupportedError(SkelError):
    """Input that DART itself cannot build: it would crash, hang or abort."""


@dataclass(frozen=True)
class SkelWarning:
    """Something loaded, but almost surely not what the author meant.

    Attributes:
        message: What was found and what was done about it.
        location: Where it is.
    """

    message: str
    location: Location

    def __str__(self) -> str:
        return f"{self.location}: warning: {self.message}"
