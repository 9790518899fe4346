"""Reading XML elements with locations: every failure becomes a ``SkelError``.

All text-to-value conversion of the SKEL parser goes through :class:`XmlReader`,
so no ``KeyError``/``ValueError``/``AttributeError`` can escape and every
message carries file, line and element path.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from lxml import etree

from skel_ros.model.errors import (
    Location,
    SkelMissingElementError,
    SkelValueError,
    SkelWarning,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

Element: TypeAlias = etree._Element  # noqa: SLF001 - lxml's element type (Any: lxml is untyped)

T = TypeVar("T")

# A C-locale floating-point number as std::stod reads it, or inf / nan.
# ASCII digits only: Python's \d and float() also take other scripts' digits (Arabic-Indic,
# superscripts), which std::stod rejects.
_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\Z",
    re.IGNORECASE | re.ASCII,
)
_INTEGER = re.compile(r"[+-]?\d+\Z", re.ASCII)
_MAX_INTEGER_CHARS = 12  # checked before int(), which refuses more than 4300 digits
_MAX_INTEGER = 1_000_000


def parse_number(token: str) -> float | None:
    """Return the value of one numeric token, or None if it is not a number.

    ``float`` is the fast path: on ASCII text without ``_`` (``float`` takes
    ``1_0`` and other scripts' digits, ``std::stod`` does not) and without
    surrounding whitespace, it accepts exactly what :data:`_NUMBER` accepts.
    """
    if token.isascii() and "_" not in token and token == token.strip():
        try:
            return float(token)
        except ValueError:
            return None
    return float(token) if _NUMBER.match(token) else None


# A C99 hexadecimal floating-point number ("0x1.8p+1"), which std::stod also reads.
_HEX_NUMBER = re.compile(
    r"[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?\Z", re.IGNORECASE | re.ASCII
)


def parse_stod(token: str) -> float | None:
    """:func:`parse_number`, plus the hexadecimal floats ``std::stod`` reads.

    DART reads every SKEL number with ``std::stod``; CASPR's MATLAB reader takes no
    hexadecimal floats, so :func:`parse_number` stays without them.
    """
    value = parse_number(token)
    if value is None and _HEX_NUMBER.match(token):
        try:
            return float.fromhex(token)
        except OverflowError:  # beyond the doubles: as "1e999" reads
            return -math.inf if token.startswith("-") else math.inf
    return value


def frozen_maker(cls: type[T]) -> Callable[..., T]:
    """A positional constructor for a frozen dataclass that skips its ``__init__``.

    A frozen dataclass's ``__init__`` sets every field through
    ``object.__setattr__`` (about 0.1 us a field, plus the keyword passing), and
    the parser makes thousands of model objects; the generated constructor
    stores the fields straight into the new object's ``__dict__`` and is 2-3
    times cheaper. The object is the same as ``cls(*values)`` makes: its
    ``__dict__`` holds every field, in field order, and assignment still raises
    ``FrozenInstanceError``. Every field must be given, positionally and in
    order (defaults are not filled in). A class with ``__post_init__``,
    ``__slots__`` or ``init=False`` fields, or one that is not a frozen
    dataclass, gets ``cls`` back.
    """
    params = getattr(cls, "__dataclass_params__", None)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (
        params is None
        or not params.frozen
        or hasattr(cls, "__post_init__")
        or hasattr(cls, "__slots__")
        or any(not f.init for f in fields)
    ):
        return cls
    names = [f.name for f in fields]
    if not all(n.isidentifier() for n in names):
        return cls
    # Generated as dataclasses generates __init__: one store per field, no loop, no zip.
    args = ", ".join(f"_{n}" for n in names)
    stores = "".join(f"    d[{n!r}] = _{n}\n" for n in names)
    source = f"def make({args}):\n    o = new(cls)\n    d = o.__dict__\n{stores}    return o\n"
    namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
    exec(source, namespace)  # noqa: S102 - source built from the dataclass's own field names
    make: Callable[..., T] = namespace["make"]
    make.__qualname__ = f"frozen_maker.<{cls.__name__}>"
    return make


new_location = frozen_maker(Location)
"""``Location(file, line, path)``, made without the dataclass ``__init__``."""

_ELEMENT = etree.Element  # as an iterchildren() tag: elements only (no comments, PIs, entities)


class XmlReader:
    """Element access bound to one source, collecting warnings.

    Element paths are computed only when a location is asked for (an error, a
    warning, or the location of a model object), and each element's path is
    kept, so a path costs one step from its parent's.

    Args:
        source: File name (or the name given to an XML string) for messages.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[SkelWarning] = []
        self._paths: dict[Element, str] = {}
        # float(text) of the number texts met so far in this document: SKEL files repeat
        # a few numbers ("0", "0.0", "1") in almost every element, and float() costs
        # several times a dictionary lookup. Only text the fast paths accept is kept.
        self._numbers: dict[str, float] = {}
        self._known_number = self._numbers.__getitem__

    # ------------------------------------------------------------------ locations

    def path(self, el: Element) -> str:
        """XPath-like path of ``el`` with ``name`` attributes: ``/skel/world/body[@name='a']``."""
        paths = self._paths
        known = paths.get(el)
        if known is not None:
            return known
        # Walk up to the nearest ancestor with a known path (or the root), then down.
        chain: list[Element] = []
        node: Element | None = el
        prefix = ""
        while node is not None:
            cached = paths.get(node)
            if cached is not None:
                prefix = cached
                break
            chain.append(node)
            node = node.getparent()
        for node in reversed(chain):
            tag = node.tag if isinstance(node.tag, str) else "?"
            name = node.get("name")
            prefix = f"{prefix}/{tag}[@name='{name}']" if name is not None else f"{prefix}/{tag}"
            paths[node] = prefix
        return prefix

    def sub_path(self, parent_path: str, el: Element) -> str:
        """The path of ``el`` whose parent's path is ``parent_path`` (kept for later lookups).

        The same string :meth:`path` computes, without walking up the tree.
        """
        name = el.get("name")
        tag = el.tag
        path = (
            f"{parent_path}/{tag}[@name='{name}']" if name is not None else f"{parent_path}/{tag}"
        )
        self._paths[el] = path
        return path

    def loc(self, el: Element) -> Location:
        """Location of ``el``."""
        return new_location(self.source, el.sourceline or 0, self.path(el))

    def loc_at(self, el: Element, path: str) -> Location:
        """Location of ``el`` whose path is known to be ``path``."""
        return new_location(self.source, el.sourceline or 0, path)

    def warn(self, message: str, el: Element) -> None:
        """Record a warning at ``el``."""
        self.warnings.append(SkelWarning(message, self.loc(el)))

    # ------------------------------------------------------------------ structure
    #
    # Children are found by iterating ``el`` itself: ``el.iterchildren(tag)`` costs
    # about 1 us just to set up, more than a pass over a SKEL element's few children.
    # The parser drops comments and processing instructions; what else can be a child
    # is an unresolved entity reference, whose ``tag`` is not a string and so matches
    # no tag name.

    @staticmethod
    def children(el: Element, tag: str | None = None) -> Iterator[Element]:
        """Child elements (comments, processing instructions and entities skipped)."""
        found: Iterator[Element] = el.iterchildren(_ELEMENT if tag is None else tag)
        return found

    def child(self, el: Element, tag: str) -> Element | None:
        """First child element called ``tag``, or None."""
        for found in el:
            if found.tag == tag:
                return found
        return None

    def require(self, el: Element, tag: str, hint: str = "") -> Element:
        """First child element called ``tag``; raise if there is none."""
        for found in el:
            if found.tag == tag:
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
        text = self.text(el)
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

    # The fast paths of number() and vector() take text that is ASCII, without "_" and
    # without ",": there float() and str.split() read exactly what the checked paths read
    # (float() also takes "1_0" and other scripts' digits, which std::stod does not).

    def number(
        self, el: Element, *, finite: bool = True, positive: bool = False, nonneg: bool = False
    ) -> float:
        """The single number in ``el``'s text."""
        text = el.text
        if text is not None:
            value = self._numbers.get(text)
            if value is None and text.isascii() and "_" not in text and "," not in text:
                try:
                    value = float(text)
                except ValueError:
                    pass  # not one number: the slow path says why
                else:
                    self._numbers[text] = value
            if (
                value is not None
                and value - value == 0.0  # finite
                and (not positive or value > 0.0)
                and (not nonneg or value >= 0.0)
            ):
                return value
        return self._number_checked(el, finite=finite, positive=positive, nonneg=nonneg)

    def _number_checked(
        self, el: Element, *, finite: bool, positive: bool, nonneg: bool
    ) -> float:
        toks = self.tokens(el)
        if len(toks) > 1:
            raise SkelValueError(
                f"<{el.tag}> holds {len(toks)} values where one number is expected",
                self.loc(el),
            )
        value = self._number(toks[0], el)
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

    def plain_floats(self, text: str | None, size: int) -> list[float] | None:
        """The ``size`` numbers of ``text`` when it plainly holds just that, else None.

        The values are not checked (they may be inf or NaN); None means "read it
        with :meth:`vector`", which checks everything and says what is wrong.
        """
        if text is not None and text.isascii() and "_" not in text and "," not in text:
            toks = text.split()
            if len(toks) == size:
                try:
                    return list(map(self._known_number, toks))
                except KeyError:
                    pass
                try:
                    values = list(map(float, toks))
                except ValueError:
                    return None
                self._numbers.update(zip(toks, values, strict=True))
                return values
        return None

    def fast_vector(self, text: str | None, size: int) -> list[float] | None:
        """:meth:`plain_floats` when all of them are finite, else None."""
        values = self.plain_floats(text, size)
        if values is not None:
            total = sum(values)  # inf / NaN propagate; an overflow goes the slow way
            if total - total == 0.0:
                return values
        return None

    def vector(
        self, el: Element, size: int, *, finite: bool = True, positive: bool = False
    ) -> list[float]:
        """A vector of ``size`` numbers from ``el``'s text.

        Fewer numbers are an error (DART reads undefined memory); extra numbers are
        ignored by DART, so they are dropped with a warning.
        """
        values = self.plain_floats(el.text, size)
        if values is not None:
            total = sum(values)  # inf / NaN propagate; an overflow goes the slow way
            if (
                (total - total == 0.0 if finite else not math.isnan(total))
                and (not positive or min(values) > 0.0)
            ):
                return values
        return self._vector_checked(el, size, finite=finite, positive=positive)

    def _vector_checked(
        self, el: Element, size: int, *, finite: bool, positive: bool
    ) -> list[float]:
        toks = self.tokens(el)
        if len(toks) < size:
            raise SkelValueError(
                f"<{el.tag}> holds {len(toks)} number(s) where {size} are required",
                self.loc(el),
            )
        if len(toks) > size:
            self.warn(f"<{el.tag}> holds {len(toks)} numbers; DART reads the first {size}", el)
        values = [self._number(t, el) for t in toks[:size]]
        for v in values:
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

    def optional_number(self, parent: Element, tag: str, default: float, **kw: bool) -> float:
        """Number in child ``tag`` of ``parent``, or ``default`` when absent."""
        el = self.child(parent, tag)
        return default if el is None else self.number(el, **kw)

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
