"""Reading XML elements with locations: every failure becomes a ``SkelError``.

All text-to-value conversion of the SKEL parser goes through :class:`XmlReader`,
so no ``KeyError``/``ValueError``/``AttributeError`` can escape and every
message carries file, line and element path.
"""

from __future__ import annotations

import math
import re
from typing import TypeAlias

from lxml import etree

from skel_ros.model.errors import (
    Location,
    SkelMissingElementError,
    SkelValueError,
    SkelWarning,
)

Element: TypeAlias = etree._Element  # noqa: SLF001 - lxml's element type (Any: lxml is untyped)

# A C-locale floating-point number as std::stod reads it, or inf / nan.
# ASCII digits only: Python's \d and float() also take other scripts' digits (Arabic-Indic,
# superscripts), which std::stod rejects.
_NUMBER_TEXT = r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)"
_NUMBER = re.compile(_NUMBER_TEXT + r"\Z", re.IGNORECASE | re.ASCII)
_INTEGER = re.compile(r"[+-]?\d+\Z", re.ASCII)
_MAX_INTEGER_CHARS = 12  # checked before int(), which refuses more than 4300 digits
_MAX_INTEGER = 1_000_000


def parse_number(token: str) -> float | None:
    """Return the value of one numeric token, or None if it is not a number."""
    return float(token) if _NUMBER.match(token) else None


# A C99 hexadecimal floating-point number ("0x1.8p+1"), which std::stod also reads.
_HEX_NUMBER = re.compile(
    r"[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?\Z", re.IGNORECASE | re.ASCII
)


def _decimals(tokens: list[str]) -> list[float] | None:
    """The values of ``tokens`` when every one is a number :data:`_NUMBER` matches, else None.

    ``float()`` reads a superset of those numbers: it also takes ``_`` between digits,
    other scripts' digits and surrounding whitespace. On ASCII tokens without ``_`` or
    whitespace (tokens of ``str.split()``) it reads exactly them, so one ``float()``
    per token both checks and converts (no pattern match per token).
    """
    joined = "".join(tokens)
    if not joined.isascii() or "_" in joined:
        return None
    try:
        return list(map(float, tokens))
    except ValueError:
        return None


def parse_stod(token: str) -> float | None:
    """:func:`parse_number`, plus the hexadecimal floats ``std::stod`` reads.

    DART reads every SKEL number with ``std::stod``; CASPR's MATLAB reader takes no
    hexadecimal floats, so :func:`parse_number` stays without them.
    """
    values = _decimals([token]) if token == token.strip() else None
    if values is not None:
        return values[0]
    if _HEX_NUMBER.match(token):
        try:
            return float.fromhex(token)
        except OverflowError:  # beyond the doubles: as "1e999" reads
            return -math.inf if token.startswith("-") else math.inf
    return None


class XmlReader:
    """Element access bound to one source, collecting warnings.

    Args:
        source: File name (or the name given to an XML string) for messages.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[SkelWarning] = []

    # ------------------------------------------------------------------ locations

    @classmethod
    def path(cls, el: Element) -> str:
        """XPath-like path of ``el`` with ``name`` attributes: ``/skel/world/body[@name='a']``."""
        parent = el.getparent()
        return cls.child_path("" if parent is None else cls.path(parent), el)

    @staticmethod
    def child_path(parent_path: str, el: Element) -> str:
        """The path of ``el``, a child of the element whose path is ``parent_path``."""
        tag = el.tag if isinstance(el.tag, str) else "?"
        name = el.get("name")
        step = f"{tag}[@name='{name}']" if name is not None else tag
        return f"{parent_path}/{step}"

    def loc(self, el: Element, path: str | None = None) -> Location:
        """Location of ``el``; ``path`` is its path when the caller knows it."""
        return Location(self.source, el.sourceline or 0, self.path(el) if path is None else path)

    def warn(self, message: str, el: Element) -> None:
        """Record a warning at ``el``."""
        self.warnings.append(SkelWarning(message, self.loc(el)))

    # ------------------------------------------------------------------ structure
    #
    # The parser drops comments and processing instructions; what else can be a child
    # of an element is an unresolved entity reference, whose ``tag`` is not a string
    # and so matches no tag name.

    @staticmethod
    def children(el: Element, tag: str | None = None) -> list[Element]:
        """Child elements (comments, processing instructions and entities skipped)."""
        # A comparison per child: lxml's iterchildren(tag) costs more to set up
        # than it saves on the few children of a SKEL element.
        if tag is None:
            return [child for child in el if isinstance(child.tag, str)]
        return [child for child in el if child.tag == tag]

    def child(self, el: Element, tag: str) -> Element | None:
        """First child element called ``tag``, or None."""
        for found in el:
            if found.tag == tag:
                return found
        return None

    def require(self, el: Element, tag: str, hint: str = "") -> Element:
        """First child element called ``tag``; raise if there is none."""
        found = self.child(el, tag)
        if found is not None:
            return found
        raise SkelMissingElementError(f"<{el.tag}> needs a <{tag}> element", self.loc(el), hint)

    def need(self, kids: dict[str, Element], el: Element, tag: str, hint: str = "") -> Element:
        """``kids[tag]`` (from :meth:`index` of ``el``); raise as :meth:`require` if absent."""
        found = kids.get(tag)
        if found is None:
            raise SkelMissingElementError(
                f"<{el.tag}> needs a <{tag}> element", self.loc(el), hint
            )
        return found

    def attribute(self, el: Element, name: str) -> str:
        """Value of a required attribute."""
        value = el.get(name)
        if value is None:
            raise SkelMissingElementError(f'<{el.tag}> needs a "{name}" attribute', self.loc(el))
        return str(value)

    def check_children(self, el: Element, known: frozenset[str], what: str = "") -> None:
        """Warn about child tags DART does not read (it silently ignores them)."""
        for child in el:
            tag = child.tag
            if tag not in known and isinstance(tag, str):
                self.warn(f"unknown element <{tag}> in <{el.tag}>{what} is ignored by DART", child)

    def index(self, el: Element, known: frozenset[str], what: str = "") -> dict[str, Element]:
        """The first child element of each tag, in one pass; warns as :meth:`check_children`."""
        first: dict[str, Element] = {}
        for child in el:
            tag = child.tag
            if tag not in known:
                if not isinstance(tag, str):
                    continue  # an entity reference
                self.warn(f"unknown element <{tag}> in <{el.tag}>{what} is ignored by DART", child)
            if tag not in first:
                first[tag] = child
        return first

    @staticmethod
    def first_children(el: Element) -> dict[str, Element]:
        """The first child element of each tag (no warnings)."""
        first: dict[str, Element] = {}
        for child in el:
            tag = child.tag
            if tag not in first and isinstance(tag, str):
                first[tag] = child
        return first

    # ------------------------------------------------------------------ values

    def text(self, el: Element) -> str:
        """Stripped text of ``el``; raise if empty."""
        value = (el.text or "").strip()
        if not value:
            raise SkelValueError(f"<{el.tag}> is empty", self.loc(el))
        return value

    def tokens(self, el: Element) -> list[str]:
        """Whitespace-separated tokens of the text of ``el`` (raise if empty)."""
        text = (el.text or "").strip()
        if not text:
            raise SkelValueError(f"<{el.tag}> is empty", self.loc(el))
        if "," in text:
            raise SkelValueError(
                f"<{el.tag}> text {text[:60]!r} contains commas",
                self.loc(el),
                "SKEL separates numbers by whitespace only",
            )
        return text.split()

    def _number(self, token: str, el: Element) -> float:
        value = parse_stod(token)
        if value is None:
            raise SkelValueError(f"<{el.tag}>: {token[:60]!r} is not a number", self.loc(el))
        return value

    def number(
        self, el: Element, *, finite: bool = True, positive: bool = False, nonneg: bool = False
    ) -> float:
        """The single number in ``el``'s text."""
        toks = self.tokens(el)
        if len(toks) > 1:
            raise SkelValueError(
                f"<{el.tag}> holds {len(toks)} values where one number is expected",
                self.loc(el),
            )
        values = _decimals(toks)
        value = values[0] if values is not None else self._number(toks[0], el)
        if positive or nonneg or not math.isfinite(value):
            self._check_value(value, el, finite=finite, positive=positive, nonneg=nonneg)
        return value

    def _check_value(
        self, value: float, el: Element, *, finite: bool, positive: bool, nonneg: bool
    ) -> None:
        if math.isnan(value):
            raise SkelValueError(f"<{el.tag}> is NaN", self.loc(el))
        if finite and math.isinf(value):
            raise SkelValueError(f"<{el.tag}> must be finite, got {value}", self.loc(el))
        if positive and not value > 0.0:
            raise SkelValueError(f"<{el.tag}> must be positive, got {value}", self.loc(el))
        if nonneg and value < 0.0:
            raise SkelValueError(f"<{el.tag}> must not be negative, got {value}", self.loc(el))

    def vector(
        self, el: Element, size: int, *, finite: bool = True, positive: bool = False
    ) -> list[float]:
        """A vector of ``size`` numbers from ``el``'s text.

        Fewer numbers are an error (DART reads undefined memory); extra numbers are
        ignored by DART, so they are dropped with a warning.
        """
        toks = self.tokens(el)
        if len(toks) != size:
            if len(toks) < size:
                raise SkelValueError(
                    f"<{el.tag}> holds {len(toks)} number(s) where {size} are required",
                    self.loc(el),
                )
            self.warn(f"<{el.tag}> holds {len(toks)} numbers; DART reads the first {size}", el)
            toks = toks[:size]
        values = _decimals(toks)
        if values is None:  # hexadecimal floats, or the first token that is no number says why
            values = [self._number(t, el) for t in toks]
        if not all(map(math.isfinite, values)) or (positive and min(values) <= 0.0):
            for v in values:  # the first value that fails a check says why
                self._check_value(v, el, finite=finite, positive=positive, nonneg=False)
        return values

    def integers(self, el: Element, size: int) -> list[int]:
        """A vector of ``size`` non-negative integers."""
        toks = self.tokens(el)
        if len(toks) < size:
            raise SkelValueError(
                f"<{el.tag}> holds {len(toks)} integer(s) where {size} are required",
                self.loc(el),
            )
        out: list[int] = []
        for tok in toks[:size]:
            if (not _INTEGER.match(tok) or len(tok) > _MAX_INTEGER_CHARS
                    or not 0 <= int(tok) <= _MAX_INTEGER):
                raise SkelValueError(
                    f"<{el.tag}>: {tok[:60]!r} is not a non-negative integer", self.loc(el)
                )
            out.append(int(tok))
        return out

    def flag(self, el: Element) -> bool:
        """A SKEL bool: ``1``/``true`` or ``0``/``false`` in any case.

        DART reads anything else as false and logs an error; we do the same with
        a warning.
        """
        text = (el.text or "").strip()
        low = text.lower()
        if low in ("1", "true"):
            return True
        if low in ("0", "false"):
            return False
        self.warn(f"<{el.tag}> {text[:40]!r} is not a bool (1/true/0/false); DART reads false", el)
        return False

    def number_attribute(self, el: Element, name: str) -> float | None:
        """Numeric attribute value; None (with a warning) when it is not a number."""
        raw = el.get(name)
        if raw is None:
            return None
        value = parse_stod(raw.strip())
        if value is None or math.isnan(value):
            self.warn(f'attribute {name}="{raw[:40]}" is not a number; DART ignores it', el)
            return None
        return value
