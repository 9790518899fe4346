"""Parse a SKEL document as DART does: strict XML first, then what tinyxml2 accepts.

DART 6.20 reads SKEL with tinyxml2, which is more lenient than XML: a comment
may hold ``--`` or end with ``--->``, a ``&`` that starts no entity is text, an
attribute value may hold ``<``, content around the root element is skipped (DART
reads the first top-level ``<skel>``), an XML declaration may follow whitespace
or another declaration, an end tag at the top level ends the document, and a NUL
byte ends it too. lxml refuses all of these.

:func:`parse_document` parses with lxml; only when lxml refuses the bytes (or
they hold a ``<?`` that tinyxml2 may refuse) does it walk the document the way
tinyxml2 does (``XMLDocument::Identify`` and the ``ParseDeep`` methods of
tinyxml2.cpp) and either refuse it, with the line, where DART refuses it too, or
rewrite the constructs into strict XML and parse that, with one warning per kind
of construct naming its first line. The rewrite never adds or removes a line
break, so every later error and warning keeps its line.

Two things DART loads are refused because they cannot be read as text: bytes
that are not UTF-8 outside comments (unless an encoding is declared) and control
characters in text or attribute values (XML forbids them; ROS names are UTF-8).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lxml import etree

from skel_ros.model.errors import Location, SkelSyntaxError, SkelWarning

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.model.xmlread import Element

_BOM = b"\xef\xbb\xbf"
_PARSER_OPTIONS = {
    "resolve_entities": False, "no_network": True, "load_dtd": False, "huge_tree": False,
    "remove_comments": True, "remove_pis": True, "remove_blank_text": True,
}
_WS = frozenset(b" \t\n\r\v\f")  # tinyxml2's IsWhiteSpace: isspace() of an ASCII byte
_NAME_START = re.compile(rb"[A-Za-z:_\x80-\xff]")  # tinyxml2's IsNameStartChar
_NAME = re.compile(rb"[A-Za-z:_\x80-\xff][A-Za-z:_\x80-\xff0-9.\-]*")  # ... IsNameChar
_REFERENCE = re.compile(rb"&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9A-Fa-f]+);")
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_DECLARATION = re.compile(rb"<\?xml[ \t\r\n?]")
_ENCODING = re.compile(rb"""encoding\s*=\s*(["'])(.*?)\1""", re.DOTALL)
_MAX_LINES_LISTED = 10
_MAX_DEPTH = 256  # libxml2's limit without XML_PARSE_HUGE (huge_tree), as in the strict parse
_AMP, _LT, _GT = b"&<>"


def _strict_parser() -> etree.XMLParser:
    return etree.XMLParser(**_PARSER_OPTIONS)


def parse_document(data: bytes, label: str) -> tuple[Element, list[SkelWarning]]:
    """The root element of the document and the warnings about XML DART tolerates.

    Raises:
        SkelSyntaxError: For bytes DART refuses too (or that cannot be read as
            text), with the line.
    """
    try:
        root = etree.fromstring(data, _strict_parser())
    except etree.XMLSyntaxError:
        pass
    except ValueError as exc:
        raise SkelSyntaxError(f"malformed XML: {exc}", Location(label)) from None
    else:
        if not _has_late_question_mark(data):
            return root, []
    return _Tinyxml2Reading(data, label).parse()


def _has_late_question_mark(data: bytes) -> bool:
    """True when ``<?`` occurs after the document's leading declaration (if any).

    lxml accepts processing instructions anywhere; tinyxml2 takes every ``<?`` for a
    declaration and refuses one inside an element or after other content. The
    search goes from ``?`` to ``?`` (a byte search, rare in SKEL files): searching
    for the two bytes ``<?`` costs a visit of every ``<``.
    """
    i = data.find(b"?")
    leading = True
    while i >= 0:
        if i > 0 and data[i - 1] == _LT:
            if not (leading and not data[:i - 1].strip(b" \t\r\n").removeprefix(_BOM)):
                return True
            end = data.find(b"?>", i + 1)
            if end < 0:
                return True
            i = end + 1
        leading = False
        i = data.find(b"?", i + 1)
    return False


@dataclass
class _Kind:
    """Occurrences of one kind of tolerated construct (one warning in the end)."""

    message: str
    first: int  # byte offset
    path: str
    count: int = 1
    lines: list[int] = field(default_factory=list)


class _Tinyxml2Reading:
    """One walk over the document, as tinyxml2 reads it; see the module docstring."""

    def __init__(self, data: bytes, label: str) -> None:
        self.label = label
        nul = data.find(b"\x00")
        self.nul = nul
        self.data = data if nul < 0 else data[:nul]
        self.edits: list[tuple[int, int, bytes]] = []  # (start, end, replacement), in order
        self.kinds: dict[str, _Kind] = {}
        # Open elements: (tag, "[@name='...']" or "", start offset).
        self.stack: list[tuple[str, str, int]] = []
        self.top: list[tuple[str, int, int]] = []  # top-level elements: (tag, start, end)
        self.anything_but_declarations = False
        self.check_utf8 = True
        self.doc_start = 0
        # tinyxml2's XMLDocument::Identify, in its order; anything else after '<' is an element.
        self.readers: tuple[tuple[bytes, Callable[[int], int]], ...] = (
            (b"<?", self.declaration), (b"<!--", self.comment), (b"<![CDATA[", self.cdata),
            (b"<!", self.unknown), (b"</", self.end_tag),
        )

    # ------------------------------------------------------------------ helpers

    def line(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1

    def refuse(self, reason: str, offset: int, hint: str = "") -> SkelSyntaxError:
        # No element path, as for every malformed-XML error: the tree is not built.
        return SkelSyntaxError(f"malformed XML: {reason}",
                               Location(self.label, self.line(offset)), hint)

    def note(self, kind: str, message: str, offset: int) -> None:
        known = self.kinds.get(kind)
        if known is None:
            path = "".join(f"/{tag}{name}" for tag, name, _ in self.stack)
            self.kinds[kind] = _Kind(message, offset, path)
        else:
            known.count += 1
            if len(known.lines) < _MAX_LINES_LISTED:
                known.lines.append(self.line(offset))

    def blank(self, start: int, end: int) -> None:
        """Replace the bytes by spaces, keeping the line breaks."""
        self.edits.append((start, end, _blanked(self.data[start:end])))

    def skip_ws(self, p: int) -> int:
        data, n = self.data, len(self.data)
        while p < n and data[p] in _WS:
            p += 1
        return p

    def check_chars(self, start: int, end: int, what: str) -> None:
        """Refuse control characters and (without a declared encoding) bytes that are not UTF-8."""
        segment = self.data[start:end]
        bad = _CONTROL.search(segment)
        if bad is not None:
            raise self.refuse(
                f"control character 0x{bad.group()[0]:02x} in {what}", start + bad.start(),
                "XML does not allow control characters (DART would keep it in the value);"
                " remove it")
        if self.check_utf8:
            try:
                segment.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self.refuse(
                    f"byte 0x{segment[exc.start]:02x} in {what} is not UTF-8",
                    start + exc.start,
                    "save the file as UTF-8, or declare its encoding in <?xml ... encoding=...?>",
                ) from None

    def escape(self, start: int, end: int, *, attribute: bool) -> None:
        """Rewrite ``&`` that starts no reference (tinyxml2 keeps it as text), ``<``, ``]]>``."""
        segment = self.data[start:end]
        if b"&" not in segment and b"]]>" not in segment and (
                not attribute or b"<" not in segment):
            return
        out = bytearray()
        i = 0
        while i < len(segment):
            c = segment[i]
            if c == _AMP and _REFERENCE.match(segment, i) is None:  # &
                self.note("amp", "'&' that starts no entity (DART keeps it as text)", start + i)
                out += b"&amp;"
            elif c == _LT:  # only reached in an attribute value
                self.note("lt", "'<' in an attribute value", start + i)
                out += b"&lt;"
            elif c == _GT and not attribute and segment[max(0, i - 2):i] == b"]]":
                self.note("cdata-end", "']]>' in text", start + i)
                out += b"&gt;"
            else:
                out.append(c)
            i += 1
        self.edits.append((start, end, bytes(out)))

    # ------------------------------------------------------------------ the walk

    def parse(self) -> tuple[Element, list[SkelWarning]]:
        data = self.data
        p = self.doc_start = len(_BOM) if data.startswith(_BOM) else 0
        while p >= 0:
            p = self.skip_ws(p)
            if p >= len(data):
                break
            p = self.node(p)
        if self.stack:
            tag, _, start = self.stack[-1]
            where = (f"; DART stops reading at the NUL byte on line {self.line(self.nul)}"
                     if self.nul >= 0 else "")
            raise self.refuse(f"the document ends inside <{tag}>{where}", start,
                              "DART refuses it too")
        if self.nul >= 0:
            self.note("nul", f"a NUL byte: DART stops reading there and ignores the rest"
                      f" ({len(data) - self.nul} bytes)", self.nul)  # data is cut there
        self.drop_other_top_level()
        return self.finish()

    def node(self, p: int) -> int:
        """Read the node at ``p`` (tinyxml2's Identify order); the offset after it, -1 to stop."""
        data = self.data
        if data[p] != _LT:
            return self.text(p)
        for prefix, read in self.readers:
            if data.startswith(prefix, p):
                return read(p)
        return self.start_tag(p)

    def text(self, p: int) -> int:
        end = self.data.find(b"<", p)
        if end < 0:
            raise self.refuse("text with no element after it", p,
                              "DART refuses text at the end of the document too")
        if not self.stack:
            self.anything_but_declarations = True
            self.note("outside", "text outside the root element (ignored by DART)", p)
            self.blank(p, end)
        else:
            self.check_chars(p, end, "text")
            self.escape(p, end, attribute=False)
        return end

    def declaration(self, p: int) -> int:
        end = self.data.find(b"?>", p + 2)
        if end < 0:
            raise self.refuse("'<?' is never closed with '?>'", p, "DART refuses it too")
        end += 2
        if self.stack or self.anything_but_declarations:
            raise self.refuse(
                "an XML declaration or processing instruction ('<?') after other content", p,
                "DART (tinyxml2) takes '<?...?>' for a declaration and refuses it anywhere"
                " but at the start of the file; remove it")
        if _DECLARATION.match(self.data, p) is None:
            return end  # a processing instruction before the root: lxml reads it too
        if p != self.doc_start:
            self.note("declaration", "an XML declaration that is not the first thing in the"
                      " file (ignored by DART)", p)
            self.blank(p, end)
            return end
        encoding = _ENCODING.search(self.data, p, end)
        if encoding is not None:
            name = encoding.group(2).decode("ascii", "replace")
            try:
                etree.fromstring(self.data[p:end] + b"<a/>", _strict_parser())
            except etree.XMLSyntaxError:
                self.note("encoding", f"an XML declaration with encoding {name!r}, which is"
                          " not known (DART ignores it; the file is read as UTF-8)", p)
                self.blank(p, end)
                return end
            self.check_utf8 = name.strip().lower().replace("_", "-") in ("utf-8", "utf8")
        return end

    def comment(self, p: int) -> int:
        end = self.data.find(b"-->", p + 4)
        if end < 0:
            raise self.refuse("comment is never closed with '-->'", p, "DART refuses it too")
        if not self.stack:
            self.anything_but_declarations = True
        content = self.data[p + 4:end]
        if content.endswith(b"-"):
            self.note("dashes-end", "a comment closed with '--->' (DART reads it; XML"
                      " does not allow '--' in comments)", p)
        elif b"--" in content:
            self.note("dashes", "'--' inside a comment (DART reads it; XML does not allow"
                      " it)", p)
        elif _CONTROL.search(content) is not None or not _utf8(content):
            self.note("comment-bytes", "a comment with bytes that are not UTF-8 text"
                      " (DART ignores comments)", p)
        else:
            return end + 3
        self.blank(p + 4, end)
        return end + 3

    def cdata(self, p: int) -> int:
        end = self.data.find(b"]]>", p + 9)
        if end < 0:
            raise self.refuse("CDATA section is never closed with ']]>'", p,
                              "DART refuses it too")
        if not self.stack:
            self.anything_but_declarations = True
            self.note("outside", "text outside the root element (ignored by DART)", p)
            self.blank(p, end + 3)
        else:
            self.check_chars(p + 9, end, "CDATA")
        return end + 3

    def unknown(self, p: int) -> int:
        end = self.data.find(b">", p + 2)
        if end < 0:
            raise self.refuse("'<!' is never closed with '>'", p, "DART refuses it too")
        if self.stack:
            self.note("unknown", "a '<!...>' node inside an element (ignored by DART)", p)
        else:
            self.anything_but_declarations = True  # a DOCTYPE: DART ignores it
        self.blank(p, end + 1)
        return end + 1

    def end_tag(self, p: int, slash: int | None = None) -> int:
        """Read the end tag at ``p`` whose ``/`` is at ``slash`` (default ``p + 1``).

        Returns the offset after it; -1 when it ends the document (a stray top-level
        one). As tinyxml2: whitespace may come between ``<`` and ``/`` but not after
        the ``/``, and attributes may follow the name (DART ignores them).
        """
        data = self.data
        slash = p + 1 if slash is None else slash
        m = _NAME.match(data, slash + 1)
        if m is None:
            raise self.refuse("'</' is not followed by a name", p, "DART refuses it too")
        tag = m.group().decode("utf-8", "replace")
        close = self.skip_ws(m.end())
        names: set[bytes] = set()
        mark = len(self.edits)
        while _NAME_START.match(data, close):
            _, _, after = self.attribute(close, f"/{tag}", names)
            close = self.skip_ws(after)
        if not data.startswith(b">", close):
            raise self.refuse(f"end tag </{tag}> is not closed with '>'", p,
                              "DART refuses it too")
        if slash != p + 1:
            self.note("space", "whitespace between '<' and the element name", p)
        if names or slash != p + 1:
            if names:
                self.note("end-attributes", f"attributes in the end tag </{tag}> (ignored by"
                          " DART)", p)
            del self.edits[mark:]  # the attributes' rewrites: they are blanked
            self.edits.append((p, close, b"</" + m.group() + _blanked(data[p:close])))
        if not self.stack:
            self.note("stray", f"an end tag </{tag}> outside the root element: DART stops"
                      " reading there and ignores the rest", p)
            self.blank(p, len(data))
            return -1
        open_tag, _, start = self.stack[-1]
        if open_tag != tag:
            raise self.refuse(f"</{tag}> closes <{open_tag}> (line {self.line(start)})", p,
                              "DART refuses mismatched tags too")
        self.stack.pop()
        if not self.stack:
            self.top.append((tag, start, close + 1))
        return close + 1

    def start_tag(self, p: int) -> int:
        data = self.data
        first = self.skip_ws(p + 1)
        if data.startswith(b"/", first):
            return self.end_tag(p, first)
        tag, q = self.start_name(p, first)
        names: set[bytes] = set()
        element_name: str | None = None
        while True:
            q = self.skip_ws(q)
            if q >= len(data):
                raise self.refuse(f"<{tag}> is never closed with '>'", p, "DART refuses it too")
            if _NAME_START.match(data, q):
                attr, start, q = self.attribute(q, tag, names)
                if attr == b"name":
                    element_name = data[start:q - 1].decode("utf-8", "replace")
            elif data.startswith(b"/>", q):
                if not self.stack:
                    self.anything_but_declarations = True
                    self.top.append((tag, p, q + 2))
                return q + 2
            elif data.startswith(b">", q):
                self.open_element(tag, element_name, p)
                return q + 1
            else:
                raise self.refuse(f"unexpected character in the start tag <{tag}>", q,
                                  "DART refuses it too")

    def start_name(self, p: int, first: int) -> tuple[str, int]:
        """The name of the start tag at ``p`` that begins at ``first``, and the offset after it."""
        data = self.data
        m = _NAME.match(data, first)
        if m is None:
            raise self.refuse("'<' is not followed by an element name", p,
                              "DART refuses it too; write '&lt;' for a '<' in text")
        tag = m.group().decode("utf-8", "replace")
        if first != p + 1:  # "< name": the whitespace goes after the name
            self.note("space", "whitespace between '<' and the element name", p)
            self.edits.append((p, m.end(), b"<" + m.group() + data[p + 1:first]))
        self.check_chars(m.start(), m.end(), f"the element name <{tag}>")
        return tag, m.end()

    def open_element(self, tag: str, element_name: str | None, p: int) -> None:
        if not self.stack:
            self.anything_but_declarations = True
        elif len(self.stack) >= _MAX_DEPTH:
            raise self.refuse(f"elements are nested more than {_MAX_DEPTH} deep", p,
                              "no robot model needs that; lxml (and so skel-ros) reads no deeper")
        name = f"[@name='{element_name}']" if element_name is not None else ""
        self.stack.append((tag, name, p))

    def attribute(self, q: int, tag: str, names: set[bytes]) -> tuple[bytes, int, int]:
        """Read the attribute at ``q``: its name, the value's first offset, the offset after it."""
        data = self.data
        a = _NAME.match(data, q)
        if a is None:  # the caller saw a name start
            raise self.refuse(f"unexpected character in the start tag <{tag}>", q)
        attr = a.group()
        shown = attr.decode("utf-8", "replace")
        q = self.skip_ws(a.end())
        if not data.startswith(b"=", q):
            raise self.refuse(f"attribute {shown} of <{tag}> has no value", q,
                              "DART refuses it too")
        q = self.skip_ws(q + 1)
        quote = data[q:q + 1]
        if quote not in (b'"', b"'"):
            raise self.refuse(f"attribute {shown} of <{tag}> is not quoted", q,
                              "DART refuses it too")
        close = data.find(quote, q + 1)
        if close < 0:
            raise self.refuse(f"attribute value of <{tag}> is never closed", q,
                              "DART refuses it too")
        if attr in names:
            raise self.refuse(f"attribute {shown} is repeated in <{tag}>", q,
                              "DART refuses it too")
        names.add(attr)
        self.check_chars(q + 1, close, "an attribute value")
        self.escape(q + 1, close, attribute=True)
        return attr, q + 1, close + 1

    def drop_other_top_level(self) -> None:
        """Blank every top-level element but the first <skel> (DART's FirstChildElement)."""
        if len(self.top) < 2:  # noqa: PLR2004 - one root: nothing to drop
            return
        keep = next((t for t in self.top if t[0] == "skel"), self.top[0])
        dropped = [(start, end) for element in self.top if element is not keep
                   for _, start, end in (element,)]
        starts = [start for start, _ in dropped]

        def inside(offset: int) -> bool:
            i = bisect.bisect_right(starts, offset) - 1
            return i >= 0 and offset < dropped[i][1]

        self.edits = [e for e in self.edits if not inside(e[0])]
        for start, end in dropped:
            self.note("outside", "an element outside the root element (DART reads the first"
                      " top-level <skel> and ignores the rest)", start)
            self.blank(start, end)

    # ------------------------------------------------------------------ the result

    def rewritten(self) -> bytes:
        out = bytearray()
        p = 0
        for start, end, replacement in sorted(self.edits, key=lambda e: e[0]):
            if start < p:
                continue  # inside a range already blanked
            out += self.data[p:start]
            out += replacement
            p = end
        out += self.data[p:]
        return bytes(out)

    def finish(self) -> tuple[Element, list[SkelWarning]]:
        parser = etree.XMLParser(recover=True, **_PARSER_OPTIONS)
        try:
            root = etree.fromstring(self.rewritten(), parser)
        except etree.XMLSyntaxError as exc:
            raise SkelSyntaxError(f"malformed XML: {exc.msg}",
                                  Location(self.label, exc.lineno or 0)) from None
        except ValueError as exc:
            raise SkelSyntaxError(f"malformed XML: {exc}", Location(self.label)) from None
        prefixes: dict[str, int] = {}
        for entry in parser.error_log:
            if entry.level_name == "WARNING":
                continue  # not an error in strict parsing either
            if entry.type_name != "NS_ERR_UNDEFINED_NAMESPACE":
                raise SkelSyntaxError(f"malformed XML: {entry.message}",
                                      Location(self.label, entry.line))
            prefixes.setdefault(entry.message, entry.line)
        if root is None:
            raise SkelSyntaxError("malformed XML: no root element", Location(self.label, 1))
        warnings = [self.warning(kind) for kind in self.kinds.values()]
        warnings += [
            SkelWarning(f"{message}: DART reads the name with its prefix, as written"
                        " (strict XML refuses an undeclared prefix)", Location(self.label, line))
            for message, line in prefixes.items()
        ]
        return root, warnings

    def warning(self, kind: _Kind) -> SkelWarning:
        message = kind.message
        if kind.count > 1:
            listed = ", ".join(str(line) for line in kind.lines)
            more = "" if kind.count - 1 == len(kind.lines) else ", ..."
            message += f" (and {kind.count - 1} more, lines {listed}{more})"
        return SkelWarning(f"tinyxml2 (DART's XML reader) accepts {message}",
                           Location(self.label, self.line(kind.first), kind.path))


def _blanked(data: bytes) -> bytes:
    """As many spaces as ``data`` has bytes, with its line breaks kept."""
    return re.sub(rb"[^\r\n]", b" ", data)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
