"""Safe XML parsing with file positions, for the validation stage.

:func:`parse_xml` turns bytes into a :class:`ParsedDocument`: the lxml tree plus a way to
find the ``LINE:COLUMN`` of the ``<`` of each element's start tag (1-based). A line offset
shifts every position, so the lines of a document taken out of an S/MIME file point into
that file.

Hostile input: DTDs/DOCTYPEs are refused outright (so no entity is ever expanded or
fetched), the parser never touches the network, inputs above MAX_DOCUMENT_BYTES are
refused, and every scan here is a single left-to-right pass (``str.find``, never a
backtracking pattern), so the time is linear in the input.
"""

from __future__ import annotations

import bisect
import codecs
import itertools
import re
from collections import Counter

from lxml import etree

from govkit.common.findings import DocumentError, Finding
from govkit.common.inputs import too_large_message
from govkit.common.limits import MAX_CHILDREN, MAX_DOCUMENT_BYTES, MAX_ELEMENTS

# --------------------------------------------------------------------------- decoding


def declared_encoding(data: bytes) -> str | None:
    """The encoding named in an XML declaration at the very start, if any."""
    head = data[:512]
    if not head.lstrip().startswith(b"<?xml"):
        return None
    decl = head[:head.find(b"?>") if b"?>" in head else len(head)]
    at = decl.find(b"encoding")
    if at < 0:
        return None
    rest = decl[at + len(b"encoding"):].lstrip()
    if not rest.startswith(b"="):
        return None
    rest = rest[1:].lstrip()
    if rest[:1] not in (b'"', b"'"):
        return None
    end = rest.find(rest[:1], 1)
    return rest[1:end].decode("ascii", "replace") if end > 0 else None


def decode_source(data: bytes) -> str:
    """Best-effort text of the document for locating things (never used for parsing)."""
    boms = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
            (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
            (codecs.BOM_UTF16_BE, "utf-16"), (b"<\x00", "utf-16-le"), (b"\x00<", "utf-16-be"))
    encoding = next((enc for bom, enc in boms if data.startswith(bom)), None)
    if encoding is None:
        encoding = "utf-8"
        declared = declared_encoding(data)
        if declared:
            try:
                encoding = codecs.lookup(declared).name
            except (LookupError, ValueError):  # unknown, or not even a name (a NUL in it)
                pass
    try:
        return data.decode(encoding, "replace")
    except Exception:  # exotic codecs can raise other errors on garbage
        return data.decode("latin-1")


# --------------------------------------------------------------------------- positions


class SourceText:
    """Maps character offsets / element indexes of one XML text to file line:column.

    The start tags are found in one pass, on first use: comments, CDATA sections and
    processing instructions (where a '<' is not markup) are located with `str.find`, and
    the start tags between them with a single-class pattern, so the work is linear even
    for a megabyte of '<<<<' or of unterminated '<!--'. In well-formed XML the n-th start
    tag found is the n-th element in document order.
    """

    _SKIPPED = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"))
    _TAG_RE = re.compile(r"<([^\s/>!?<]+)")

    def __init__(self, text: str, line_offset: int = 0):
        self.text = text
        self.line_offset = line_offset
        self._start_tags: list[tuple[str, int]] | None = None
        self._doctype_at: int | None = None
        self._line_starts: list[int] | None = None
        self._tag_columns: dict[tuple[int, str], int] = {}

    def _skipped_regions(self) -> list[tuple[int, int]]:
        text, regions, pos = self.text, [], 0
        upcoming = [text.find(opener) for opener, _ in self._SKIPPED]
        while True:
            candidates = [(at, k) for k, at in enumerate(upcoming) if at >= 0]
            if not candidates:
                return regions
            at, k = min(candidates)
            opener, closer = self._SKIPPED[k]
            end = text.find(closer, at + len(opener))
            if end < 0:  # unterminated: the rest is inside it (the parser reports it)
                regions.append((at, len(text)))
                return regions
            pos = end + len(closer)
            regions.append((at, pos))
            upcoming = [a if a < 0 or a >= pos else text.find(self._SKIPPED[j][0], pos)
                        for j, a in enumerate(upcoming)]

    def _scan(self) -> None:
        text, tags, gap = self.text, [], 0
        for start, end in [*self._skipped_regions(), (len(text), len(text))]:
            tags.extend((m.group(1), m.start()) for m in self._TAG_RE.finditer(text, gap, start))
            doctype = text.find("<!DOCTYPE", gap, start)
            if doctype >= 0 and self._doctype_at is None:
                self._doctype_at = doctype
            gap = end
        self._start_tags = tags

    @property
    def start_tags(self) -> list[tuple[str, int]]:
        if self._start_tags is None:
            self._scan()
        return self._start_tags

    @property
    def doctype_at(self) -> int | None:
        """Offset of the first DOCTYPE outside comments, CDATA and processing instructions."""
        if "<!DOCTYPE" not in self.text:
            return None
        if self._start_tags is None:
            self._scan()
        return self._doctype_at

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:  # built once, in C: lengths of the lines, summed
            lengths = (len(line) + 1 for line in self.text.split("\n"))
            self._line_starts = [0, *itertools.accumulate(lengths)]
        return self._line_starts

    def position(self, offset: int) -> tuple[int, int]:
        """(file line, column) of a character offset, both 1-based."""
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line + 1 + self.line_offset, offset - self.line_starts[line] + 1

    def file_line(self, xml_line: int) -> int:
        return max(1, xml_line) + self.line_offset

    def find_tag_on_line(self, xml_line: int, local: str) -> int:
        """Column of the first `<[prefix:]local` on an XML line, 1 if absent."""
        if not 1 <= xml_line < len(self.line_starts):
            return 1
        key = (xml_line, local)
        if key not in self._tag_columns:  # each (line, name) is searched once
            start, end = self.line_starts[xml_line - 1], self.line_starts[xml_line]
            m = re.compile(r"<(?:[^\s/>!?<:]+:)?" + re.escape(local) + r"(?=[\s/>])").search(
                self.text, start, end)
            self._tag_columns[key] = m.start() - start + 1 if m else 1
        return self._tag_columns[key]


def local_name(elem) -> str:
    """An element's name without namespace ('' for comments and processing instructions)."""
    tag = elem.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def text_value(elem) -> str:
    """An element's own text as a schema validator reads it: every text node, with
    comments and processing instructions between them left out (`<a>2<!--x-->31</a>` is
    '231')."""
    return "".join(elem.xpath("text()"))


class ParsedDocument:
    """A parsed document plus what is needed to point at its elements."""

    def __init__(self, root, source: SourceText, filename: str):
        self.root = root
        self.tree = root.getroottree()
        self.source = source
        self.filename = filename
        self.elements = list(root.iter(etree.Element))
        self._index = {e: i for i, e in enumerate(self.elements)}
        self._paths: dict[str, object] | None = None
        self._by_line: dict[tuple[int, str], object] | None = None
        self._children: dict = {}

    def tree_changed(self) -> None:
        """Forget what was derived from the tree's shape (paths, children), after a stage
        removed elements; the positions of the remaining elements stay valid."""
        self._paths = None
        self._by_line = None
        self._children = {}

    def locate(self, elem) -> tuple[int, int]:
        i = self._index.get(elem)
        local = local_name(elem)
        if i is not None and i < len(self.source.start_tags):
            name, offset = self.source.start_tags[i]
            if name.rsplit(":", 1)[-1] == local:
                return self.source.position(offset)
        line = elem.sourceline or 1
        return self.source.file_line(line), self.source.find_tag_on_line(line, local)

    def element_at_path(self, path: str | None):
        """The element a libxml2 error path ('/dds/a/b[2]') names, or None."""
        if not path:
            return None
        if self._paths is None:
            self._paths = self._build_paths()
        return self._paths.get(path)

    def _build_paths(self) -> dict[str, object]:
        # libxml2's xmlGetNodePath(), for every element in one pass: '[n]' only when the
        # parent has more than one child element of that name. Namespaced elements get
        # no entry (their errors fall back to the line).
        paths: dict[str, object] = {}
        if "}" in str(self.root.tag):
            return paths
        paths["/" + self.root.tag] = self.root
        stack = [(self.root, "/" + self.root.tag)]
        while stack:
            parent, path = stack.pop()
            kids = [c for c in parent if isinstance(c.tag, str) and "}" not in c.tag]
            counts = Counter(c.tag for c in kids)
            seen: Counter = Counter()
            for child in kids:
                seen[child.tag] += 1
                child_path = f"{path}/{child.tag}" + (
                    f"[{seen[child.tag]}]" if counts[child.tag] > 1 else "")
                paths[child_path] = child
                stack.append((child, child_path))
        return paths

    def element_on_line(self, line: int, local: str):
        """The first element named `local` whose start tag lxml puts on `line`."""
        if self._by_line is None:
            self._by_line = {}
            for e in self.elements:
                self._by_line.setdefault((e.sourceline, local_name(e)), e)
        return self._by_line.get((line, local))

    def child_names(self, parent) -> tuple[list[str], Counter]:
        """The names of `parent`'s child elements, in order and counted (cached)."""
        if parent not in self._children:
            names = [local_name(c) for c in parent if isinstance(c.tag, str)]
            self._children[parent] = (names, Counter(names))
        return self._children[parent]

    def finding(self, elem, message: str) -> Finding:
        line, col = self.locate(elem)
        return Finding(self.filename, line, col, message)


# --------------------------------------------------------------------------- parsing


def safe_parser() -> etree.XMLParser:
    """An lxml parser that loads no DTD, expands no entity and never uses the network."""
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        dtd_validation=False,
        attribute_defaults=False,
        remove_comments=False,
        collect_ids=False,
    )


def _syntax_findings(err: etree.XMLSyntaxError, filename: str,
                     source: SourceText) -> list[Finding]:
    # err.error_log may also hold entries of earlier parses (it is thread-global), so use
    # the exception's own message and position.
    line, column = err.position if err.position else (1, 1)
    message = str(err.msg or err).strip() or "parse error"
    # libxml2 ends messages with ", line L, column C" or "(..., line L)": the finding
    # states the position itself.
    message = re.sub(r",? line \d+, column \d+$", "", message)
    paren = message.rfind("(")
    if paren >= 0 and re.fullmatch(r"[^()]*, line \d+\)", message[paren + 1:]):
        message = message[:paren]
    message = message.strip() or "parse error"
    if source.line_offset:
        message = re.sub(r"\bline (\d+)",
                         lambda m: f"line {int(m.group(1)) + source.line_offset}", message)
    return [Finding(filename, source.file_line(line or 1), max(1, column or 1),
                    f"not well-formed XML: {message}")]


def _doctype_finding(filename: str, source: SourceText, offset: int | None) -> Finding:
    line, col = source.position(offset) if offset is not None else (source.file_line(1), 1)
    return Finding(filename, line, col, "DTD/DOCTYPE is not allowed in a DDS Security document")


def too_large_finding(filename: str, size: int) -> Finding:
    return Finding(filename, 1, 1, too_large_message(size, MAX_DOCUMENT_BYTES, "document"))


def _url_text(filename: str) -> str:
    return filename.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def parse_xml(data: bytes, filename: str, line_offset: int = 0) -> ParsedDocument:
    """Parse one XML document safely; DocumentError (with findings) for oversize,
    DTD-carrying or malformed input."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError("document data must be bytes")
    data = bytes(data)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError([too_large_finding(filename, len(data))])
    source = SourceText(decode_source(data), line_offset)
    if source.doctype_at is not None:
        raise DocumentError([_doctype_finding(filename, source, source.doctype_at)])
    if not data.strip():
        raise DocumentError([Finding(filename, source.file_line(1), 1,
                                     "not well-formed XML: the document is empty")])
    try:
        # lxml encodes base_url as UTF-8, strictly: a file name that is not UTF-8 (its
        # bytes as surrogate escapes) must not make a well-formed document 'not
        # well-formed'. Nothing resolves against it (the parser loads nothing).
        root = etree.fromstring(data, safe_parser(), base_url=_url_text(filename))
    except etree.XMLSyntaxError as err:
        raise DocumentError(_syntax_findings(err, filename, source)) from None
    except (ValueError, LookupError) as err:  # e.g. an unusable encoding declaration
        raise DocumentError([Finding(filename, source.file_line(1), 1,
                                     f"not well-formed XML: {err}")]) from None
    if root is None:
        raise DocumentError([Finding(filename, source.file_line(1), 1,
                                     "not well-formed XML: no root element")])
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.externalDTD is not None or docinfo.doctype:
        # Defence in depth: the text scan above should already have caught it.
        raise DocumentError([_doctype_finding(filename, source, source.doctype_at)])
    size_problem = _size_problem(root, source, filename)
    if size_problem:
        raise DocumentError([size_problem])
    return ParsedDocument(root, source, filename)


def _size_problem(root, source: SourceText, filename: str) -> Finding | None:
    """A finding if the tree is larger than schema validation can afford (MAX_ELEMENTS,
    MAX_CHILDREN); positions come from lxml's line numbers, without indexing the tree."""
    count, crowded = 0, None
    for elem in root.iter():
        count += 1
        if crowded is None and len(elem) > MAX_CHILDREN:
            crowded = elem
    if count <= MAX_ELEMENTS and crowded is None:
        return None
    elem = root if count > MAX_ELEMENTS else crowded
    line = elem.sourceline or 1
    where = (source.file_line(line), source.find_tag_on_line(line, local_name(elem)))
    if count > MAX_ELEMENTS:
        rule = f"document has {count} nodes (limit {MAX_ELEMENTS})"
    else:
        rule = f"{local_name(elem)}: {len(elem)} children (limit {MAX_CHILDREN} per element)"
    return Finding(filename, *where, f"{rule}; refused before schema validation")
