"""Safe XML parsing with file positions, and S/MIME unwrapping, for the validation stage.

:func:`_parse` turns bytes into a :class:`_Doc`: the lxml tree plus a map from each element to
the ``LINE:COLUMN`` of the ``<`` of its start tag (1-based). For S/MIME (``multipart/signed``)
files the body is parsed with a line offset, so positions point into the wrapper file.

Hostile input: DTDs/DOCTYPEs are rejected outright (so no entity expansion and no external
entity is ever fetched), the parser never touches the network, and inputs above
:data:`MAX_DOCUMENT_BYTES` are refused.
"""

from __future__ import annotations

import codecs
import email
import email.policy
import re

from lxml import etree

from govkit.findings import DocumentError, Finding

MAX_DOCUMENT_BYTES = 1_000_000


# --------------------------------------------------------------------------- source positions

# Markup scanner used to find the start tag of the n-th element. In well-formed XML a literal
# "<" only occurs in markup, comments, CDATA sections and processing instructions, so skipping
# the last three makes the n-th match of group "name" the n-th element in document order.
_MARKUP_RE = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|(?P<doctype><!DOCTYPE)|</|<(?P<name>[^\s/>!?<]+)",
    re.S,
)
_ENCODING_DECL_RE = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


def _decode_source(data: bytes) -> str:
    """Best-effort text of the document for locating things (never used for parsing)."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "replace")
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return data.decode("utf-32", "replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace")
    if data.startswith(b"<\x00"):
        return data.decode("utf-16-le", "replace")
    if data.startswith(b"\x00<"):
        return data.decode("utf-16-be", "replace")
    encoding = "utf-8"
    m = _ENCODING_DECL_RE.match(data[:512])
    if m:
        try:
            encoding = codecs.lookup(m.group(1).decode("ascii")).name
        except LookupError:
            encoding = "utf-8"
    try:
        return data.decode(encoding, "replace")
    except Exception:  # exotic codecs can raise other errors on garbage
        return data.decode("latin-1")


class _Source:
    """Maps character offsets / element indexes of one XML text to file line:column."""

    def __init__(self, text: str, line_offset: int = 0):
        self.text = text
        self.line_offset = line_offset
        self.line_starts = [0]
        self.line_starts.extend(m.end() for m in re.finditer("\n", text))
        self.start_tags: list[tuple[str, int]] = []
        self.doctype_at: int | None = None
        for m in _MARKUP_RE.finditer(text):
            if m.group("name") is not None:
                self.start_tags.append((m.group("name"), m.start()))
            elif m.group("doctype") is not None and self.doctype_at is None:
                self.doctype_at = m.start()

    def position(self, offset: int) -> tuple[int, int]:
        """(file line, column) of a character offset, both 1-based."""
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1 + self.line_offset, offset - self.line_starts[lo] + 1

    def file_line(self, xml_line: int) -> int:
        return max(1, xml_line) + self.line_offset

    def find_tag_on_line(self, xml_line: int, local: str) -> int:
        """Column of the first `<[prefix:]local` on an XML line, 1 if absent."""
        if not 1 <= xml_line <= len(self.line_starts):
            return 1
        start = self.line_starts[xml_line - 1]
        end = self.line_starts[xml_line] if xml_line < len(self.line_starts) else len(self.text)
        m = re.search(r"<(?:[^\s/>!?<:]+:)?" + re.escape(local) + r"(?=[\s/>])",
                      self.text[start:end])
        return m.start() + 1 if m else 1


class _Doc:
    """A parsed document plus what is needed to point at its elements."""

    def __init__(self, root, source: _Source, filename: str):
        self.root = root
        self.tree = root.getroottree()
        self.source = source
        self.filename = filename
        self.elements = list(root.iter(etree.Element))
        self._index = {e: i for i, e in enumerate(self.elements)}
        self._paths: dict[str, int] | None = None

    def locate(self, elem) -> tuple[int, int]:
        i = self._index.get(elem)
        local = _local(elem)
        if i is not None and i < len(self.source.start_tags):
            name, offset = self.source.start_tags[i]
            if name.rsplit(":", 1)[-1] == local:
                return self.source.position(offset)
        line = elem.sourceline or 1
        return self.source.file_line(line), self.source.find_tag_on_line(line, local)

    def element_at_path(self, path: str | None):
        if not path:
            return None
        if self._paths is None:
            self._paths = {self.tree.getpath(e): i for i, e in enumerate(self.elements)}
        i = self._paths.get(path)
        return self.elements[i] if i is not None else None

    def finding(self, elem, message: str) -> Finding:
        line, col = self.locate(elem)
        return Finding(self.filename, line, col, message)


def _local(elem) -> str:
    tag = elem.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


# --------------------------------------------------------------------------- parsing


def _make_parser() -> etree.XMLParser:
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


_LINE_IN_MSG_RE = re.compile(r"\bline (\d+)")


def _syntax_findings(err: etree.XMLSyntaxError, filename: str, source: _Source) -> list[Finding]:
    # err.error_log may also hold entries of earlier parses (it is thread-global), so use
    # the exception's own message and position.
    line, column = err.position if err.position else (1, 1)
    message = str(err.msg or err).strip() or "parse error"
    message = re.sub(r",? line \d+, column \d+$", "", message)
    message = re.sub(r"\s*\([^()]*, line \d+\)$", "", message).strip() or "parse error"
    if source.line_offset:
        message = _LINE_IN_MSG_RE.sub(
            lambda m: f"line {int(m.group(1)) + source.line_offset}", message)
    return [Finding(filename, source.file_line(line or 1), max(1, column or 1),
                    f"not well-formed XML: {message}")]


def _doctype_finding(filename: str, source: _Source, offset: int | None) -> Finding:
    line, col = source.position(offset) if offset is not None else (source.file_line(1), 1)
    return Finding(filename, line, col, "DTD/DOCTYPE is not allowed in a DDS Security document")


def _too_large(filename: str, size: int) -> Finding:
    return Finding(filename, 1, 1, f"document is too large: {size} bytes "
                                   f"(limit {MAX_DOCUMENT_BYTES} bytes)")


def _parse(data: bytes, filename: str, line_offset: int = 0) -> _Doc:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError("document data must be bytes")
    data = bytes(data)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise DocumentError([_too_large(filename, len(data))])
    source = _Source(_decode_source(data), line_offset)
    if source.doctype_at is not None:
        raise DocumentError([_doctype_finding(filename, source, source.doctype_at)])
    if not data.strip():
        raise DocumentError([Finding(filename, source.file_line(1), 1,
                                     "not well-formed XML: the document is empty")])
    try:
        root = etree.fromstring(data, _make_parser(), base_url=filename)
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
    return _Doc(root, source, filename)


# --------------------------------------------------------------------------- S/MIME

_HEADER_RE = re.compile(rb"^[!-9;-~]+[ \t]*:")


def _lines(data: bytes, start: int = 0):
    """Yield (line_start, next_line_start, line_without_eol) for data[start:]."""
    pos = start
    n = len(data)
    while pos < n:
        nl = data.find(b"\n", pos)
        end = n if nl < 0 else nl + 1
        yield pos, end, data[pos:end].rstrip(b"\r\n")
        pos = end


def _looks_like_mime(data: bytes) -> bool:
    for _, _, line in _lines(data):
        if not line.strip():
            return False
        if line[:1] in (b" ", b"\t"):
            continue
        if not _HEADER_RE.match(line):
            return False
        name = line.split(b":", 1)[0].strip().lower()
        if name in (b"mime-version", b"content-type"):
            return True
    return False


def _split_smime(data: bytes) -> tuple[bytes, int] | str | None:
    """(body, line offset) for multipart/signed; an explanation if the input is MIME but not
    usable; None if the input is not MIME at all."""
    if not _looks_like_mime(data[:4096]):
        return None
    header_end = None
    header_lines: list[bytes] = []
    for _start, end, line in _lines(data):
        if not line.strip():
            header_end = end
            break
        header_lines.append(line)
    if header_end is None:
        return "MIME message without a body"
    # Re-joined with plain LF: the email parser would treat a stray CR as a line end.
    msg = email.message_from_bytes(b"\n".join(header_lines) + b"\n\n",
                                   policy=email.policy.compat32)
    ctype = msg.get_content_type()
    if ctype != "multipart/signed":
        return (f"MIME message of type {ctype}; only S/MIME multipart/signed documents "
                "(detached signature, readable XML) are supported")
    boundary = msg.get_param("boundary")
    if not boundary or not isinstance(boundary, str):
        return "S/MIME multipart/signed message without a boundary parameter"
    delim = b"--" + boundary.encode("ascii", "replace")

    def is_delim(line: bytes) -> bool:
        return line.startswith(delim) and line[len(delim):].strip() in (b"", b"--")

    part_start = None
    for _start, end, line in _lines(data, header_end):
        if is_delim(line) and not line[len(delim):].strip():
            part_start = end
            break
    if part_start is None:
        return f"S/MIME message: boundary {boundary!r} not found"
    # Part headers (normally just "Content-Type: text/plain") up to a blank line.
    body_start = part_start
    part_headers = 0
    for _start, end, line in _lines(data, part_start):
        if not line.strip():
            body_start = end
            break
        if (_HEADER_RE.match(line) or (part_headers and line[:1] in (b" ", b"\t"))):
            part_headers += 1
            continue
        body_start = part_start  # no header block: the body starts right after the boundary
        break
    body_end = None
    for start, _end, line in _lines(data, body_start):
        if is_delim(line):
            body_end = start
            break
    if body_end is None:
        return f"S/MIME message: the signed part is not closed by boundary {boundary!r}"
    # The line break before a boundary belongs to the boundary.
    if body_end > body_start and data[body_end - 1:body_end] == b"\n":
        body_end -= 1
        while body_end > body_start and data[body_end - 1:body_end] == b"\r":
            body_end -= 1
    return data[body_start:body_end], data.count(b"\n", 0, body_start)


def unwrap_smime(data: bytes) -> tuple[bytes, int] | None:
    """If `data` is an S/MIME multipart/signed message, return (signed body, line offset).

    The body is the first MIME part without its part headers (e.g. ``Content-Type:
    text/plain``); the offset is the number of lines before the body, so that
    ``body line + offset`` is the line inside the wrapper file. Returns None when `data` is
    not a (well-formed) multipart/signed message. Signatures are NOT verified here.
    """
    result = _split_smime(bytes(data))
    return result if isinstance(result, tuple) else None
