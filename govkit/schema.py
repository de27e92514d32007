"""Validation stage: safe XML parsing, XSD validation against govkit's own DDS Security 1.1
schemas (``schemas/governance.xsd``, ``schemas/permissions.xsd``) and a small lint pass.

Every problem is a :class:`Finding` printed as ``FILE:LINE:COLUMN: message``. Lines and
columns are 1-based and point at the ``<`` of the element's start tag. For S/MIME
(``multipart/signed``) files the line numbers point into the wrapper file, not into the
extracted XML.

Hostile input: DTDs/DOCTYPEs are rejected outright (so no entity expansion and no external
entity is ever fetched), the parser never touches the network, and inputs above
:data:`MAX_DOCUMENT_BYTES` are refused.

Lint rules (run only when the document is schema-valid; every message starts with the rule):

* ``lint/domain-range``     a domain id (``id``, ``min`` or ``max``) above 230: Cyclone DDS
                            refuses such documents.
* ``lint/id-range-order``   ``id_range`` with ``min`` greater than ``max`` (an empty range).
* ``lint/validity-order``   ``not_before`` is not earlier than ``not_after``.
* ``lint/empty-topic-expression``  empty governance ``topic_expression`` (matches no topic).
* ``lint/duplicate-grant-name``    two grants with the same ``name``.
"""

from __future__ import annotations

import codecs
import difflib
import email
import email.policy
import re
import threading
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from functools import cache
from pathlib import Path

from lxml import etree

from govkit.errors import EXIT_USAGE, GovkitError
from govkit.paths import SCHEMAS_DIR

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "CYCLONE_MAX_DOMAIN_ID",
    "DocumentError",
    "DocumentKind",
    "Finding",
    "document_kind",
    "parse_document",
    "unwrap_smime",
    "validate_bytes",
    "validate_file",
]

MAX_DOCUMENT_BYTES = 1_000_000
CYCLONE_MAX_DOMAIN_ID = 230
MAX_FINDINGS = 200  # beyond this, one summary finding replaces the rest


# --------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class Finding:
    """One problem in one document."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }


class DocumentKind(StrEnum):  # a str and an Enum: DocumentKind('governance'), kind.value
    GOVERNANCE = "governance"
    PERMISSIONS = "permissions"


class DocumentError(Exception):
    """The input could not be turned into an XML tree (malformed, hostile, too large, ...)."""

    def __init__(self, findings: list[Finding]):
        self.findings = list(findings)
        super().__init__("; ".join(str(f) for f in self.findings) or "invalid document")


_SCHEMA_FILES = {
    DocumentKind.GOVERNANCE: "governance.xsd",
    DocumentKind.PERMISSIONS: "permissions.xsd",
}
_KIND_CHILD = {
    "domain_access_rules": DocumentKind.GOVERNANCE,
    "permissions": DocumentKind.PERMISSIONS,
}

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


def parse_document(data: bytes, filename: str):
    """Parse one XML document safely and return its root element.

    Raises DocumentError (with findings) for oversize, DTD-carrying or malformed input.
    The input must be plain XML; S/MIME wrappers are not removed here (see unwrap_smime).
    """
    if _looks_like_mime(bytes(data[:4096])):
        raise DocumentError([Finding(
            filename, 1, 1,
            "this is a MIME (S/MIME) message, not plain XML: extract the signed document first")])
    return _parse(data, filename).root


def document_kind(root) -> DocumentKind:
    """Governance or permissions, from the root's children; DocumentError if neither."""
    if hasattr(root, "getroot"):
        root = root.getroot()
    for child in root:
        kind = _KIND_CHILD.get(_local(child))
        if kind is not None:
            return kind
    filename = root.getroottree().docinfo.URL or "<document>"
    raise DocumentError([Finding(
        filename, root.sourceline or 1, 1,
        f"cannot tell the document kind: <{_local(root)}> has neither a <domain_access_rules> "
        "child (governance) nor a <permissions> child (permissions)")])


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


# --------------------------------------------------------------------------- schemas

_schema_lock = threading.Lock()


@cache
def _schema(kind: DocumentKind) -> etree.XMLSchema:
    path = Path(SCHEMAS_DIR) / _SCHEMA_FILES[kind]
    try:
        xsd = etree.parse(str(path), _make_parser())
        return etree.XMLSchema(xsd)
    except OSError as err:
        raise GovkitError(f"{path}: cannot read the {kind.value} schema: {err}",
                          EXIT_USAGE) from None
    except (etree.XMLSyntaxError, etree.XMLSchemaParseError) as err:
        raise GovkitError(f"{path}: broken {kind.value} schema: {err}", EXIT_USAGE) from None


_BOOLEAN_VALUES = ("true", "false", "1", "0")
_PROTECTION_KINDS = ("ENCRYPT_WITH_ORIGIN_AUTHENTICATION", "SIGN_WITH_ORIGIN_AUTHENTICATION",
                     "ENCRYPT", "SIGN", "NONE")
_ENUMS = {
    "ProtectionKind": _PROTECTION_KINDS,
    "BasicProtectionKind": ("ENCRYPT", "SIGN", "NONE"),
    "DefaultAction": ("ALLOW", "DENY"),
}

# Child order of the fixed-order elements (for "out of order" / "missing" hints).
_ORDER = {
    "domain_rule": ("domains", "allow_unauthenticated_participants", "enable_join_access_control",
                    "discovery_protection_kind", "liveliness_protection_kind",
                    "rtps_protection_kind", "topic_access_rules"),
    "topic_rule": ("topic_expression", "enable_discovery_protection",
                   "enable_liveliness_protection", "enable_read_access_control",
                   "enable_write_access_control", "metadata_protection_kind",
                   "data_protection_kind"),
    "grant": ("subject_name", "validity", "allow_rule", "deny_rule", "default"),
    "validity": ("not_before", "not_after"),
    "allow_rule": ("domains", "publish", "subscribe", "relay"),
    "deny_rule": ("domains", "publish", "subscribe", "relay"),
    "id_range": ("min", "max"),
}
_ORDER_TEXT = {
    "grant": "subject_name, validity, allow_rule/deny_rule..., default",
    "allow_rule": "domains, publish..., subscribe..., relay...",
    "deny_rule": "domains, publish..., subscribe..., relay...",
}

# Elements seen in real documents that are not DDS Security 1.1.
_FOREIGN = {
    "enable_key_revision": "a DDS Security 1.2 / RTI Connext element",
    "rtps_psk_protection_kind": "an RTI Connext extension",
    "rtps_preshared_secret_protection_kind": "an RTI Connext extension",
    "monitoring_metrics_protection_kind": "an RTI Connext extension",
    "monitoring_logging_protection_kind": "an RTI Connext extension",
    "service_request_protection_kind": "an RTI Connext extension",
    "instance_state_consistency_protection_kind": "an RTI Connext extension",
    "allowed_security_algorithms": "an RTI Connext extension",
    "subscribe_monitoring": "an RTI Connext extension",
    "enable_key_protection": "not a DDS Security element",
    "domain_id": "the DDS Security 1.0-beta spelling; 1.1 uses <domains><id>",
    "allow_unauthenticated_join": "the DDS Security 1.0 spelling of "
                                  "allow_unauthenticated_participants",
}
_FOREIGN_IN = {
    ("domains", "tag"): "RTI Connext's domain-tag extension",
    ("publish", "validity"): "OpenDDS's action-level validity extension",
    ("subscribe", "validity"): "OpenDDS's action-level validity extension",
    ("relay", "validity"): "OpenDDS's action-level validity extension",
}

_MSG_ELEMENT_RE = re.compile(r"^Element '(?P<el>[^']*)'(?:, attribute '(?P<attr>[^']*)')?: ")
_ATOMIC_RE = re.compile(r"^'(?P<value>.*)' is not a valid value of the (?:local )?"
                        r"(?:atomic|list|union) type '?(?P<type>[^']*)'?\.?$", re.S)
_ENUM_RE = re.compile(r"^\[facet 'enumeration'\] The value '(?P<value>.*)' is not an element of "
                      r"the set \{(?P<set>.*)\}\.?$", re.S)
_EXPECTED_RE = re.compile(r"Expected is (?:one of )?\( (?P<list>[^)]*) \)")


def _show(value: str, limit: int = 60) -> str:
    """Quote a document value for a message: visible whitespace, bounded length."""
    if len(value) > limit:
        value = value[:limit] + "..."
    escaped = value.encode("unicode_escape").decode("ascii") if not value.isprintable() \
        else value
    return f"'{escaped}'"


def _expected_names(message: str) -> list[str]:
    m = _EXPECTED_RE.search(message)
    if not m:
        return []
    return [n.strip().rsplit("}", 1)[-1] for n in m.group("list").split(",") if n.strip()]


def _expected_text(names: list[str]) -> str:
    if len(names) == 1:
        return f"expected {names[0]}"
    return "expected one of " + ", ".join(names)


def _enum_type_for(element: str) -> str:
    if element == "data_protection_kind":
        return "BasicProtectionKind"
    if element == "default":
        return "DefaultAction"
    return "ProtectionKind"


def _did_you_mean(value: str, allowed: tuple[str, ...] | list[str]) -> str:
    stripped = value.strip()
    if stripped in allowed and stripped != value:
        return " (remove the surrounding whitespace)"
    for a in allowed:
        if a.lower() == stripped.lower():
            return f" (values are case-sensitive: did you mean {a}?)"
    close = difflib.get_close_matches(stripped, allowed, n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


def _value_message(el: str, elem, value: str, type_name: str) -> str:
    if elem is not None and len(elem) == 0:
        value = elem.text or ""
    base = type_name.rsplit("}", 1)[-1]
    if base in ("xs:boolean", "boolean"):
        hint = ""
        if value.strip().lower() in ("true", "false"):
            hint = f" (booleans are lowercase: use {value.strip().lower()})"
        return (f"{el}: {_show(value)} is not an xs:boolean; allowed: "
                f"{', '.join(_BOOLEAN_VALUES)}{hint}")
    if base in ("xs:dateTime", "dateTime"):
        hint = ""
        if value != value.strip() and _DATETIME_RE.match(value.strip()):
            # XSD collapses whitespace here, but libxml2 (xmllint, lxml) does not.
            hint = " (remove the surrounding whitespace: libxml2-based validators reject it)"
        return (f"{el}: {_show(value)} is not an xs:dateTime; expected "
                f"YYYY-MM-DDThh:mm:ss[.fff][Z|(+|-)hh:mm], e.g. 2030-01-01T00:00:00Z{hint}")
    if base in ("DomainIdNumber", "xs:nonNegativeInteger", "nonNegativeInteger"):
        return (f"{el}: {_show(value)} is not a valid domain id; expected a non-negative "
                "integer (xs:nonNegativeInteger)")
    if base in ("ProtectionKindEnum", "BasicProtectionKindEnum", "DefaultVerdict"):
        friendly = {"ProtectionKindEnum": "ProtectionKind",
                    "BasicProtectionKindEnum": "BasicProtectionKind",
                    "DefaultVerdict": "DefaultAction"}[base]
        allowed = _ENUMS[friendly]
        return (f"{el}: {_show(value)} is not a valid {friendly}; allowed: "
                f"{', '.join(allowed)}{_did_you_mean(value, allowed)}")
    return f"{el}: {_show(value)} is not a valid value of type {base}"


def _content_message(el: str, elem, rest: str) -> str:
    names = _expected_names(rest)
    parent = elem.getparent() if elem is not None else None
    parent_name = _local(parent) if parent is not None else ""
    siblings = [_local(c) for c in parent if isinstance(c.tag, str)] if parent is not None else []
    order = _ORDER.get(parent_name, ())
    foreign = _FOREIGN_IN.get((parent_name, el)) or _FOREIGN.get(el)
    if foreign:
        hint = f" ({el} is {foreign}, not part of DDS Security 1.1)"
    elif any(n.lower() == el.lower() and n != el for n in (names or order)):
        hint = " (element names are case-sensitive)"
    else:
        hint = ""

    if "Missing child element(s)" in rest:
        own = [_local(c) for c in elem if isinstance(c.tag, str)] if elem is not None else []
        if el in ("publish", "subscribe", "relay") and "topics" not in own:
            return f"{el}: missing child element; expected topics (required)"
        return f"{el}: missing child element; {_expected_text(names)}" if names else \
            f"{el}: missing child element(s)"
    if "This element is not expected" in rest:
        if not names:
            if not foreign and siblings.count(el) > 1 and (
                    el in order or parent_name in ("publish", "subscribe", "relay")):
                return f"{el}: element not allowed here (duplicate {el}?){hint}"
            return f"{el}: element not allowed here{hint}"
        expected = _expected_text(names)
        if el not in order:
            return f"{el}: unexpected element; {expected}{hint}"
        missing = [n for n in names if n not in siblings]
        if (siblings.count(el) > 1 and names[0] in order
                and order.index(el) < order.index(names[0])):
            return f"{el}: duplicate element; {expected} here"
        if len(names) == 1 and missing:
            return f"{el}: unexpected element; {expected} ({names[0]} is missing)"
        order_text = _ORDER_TEXT.get(parent_name, ", ".join(order))
        return f"{el}: out of order; {expected} here (order in {parent_name}: {order_text})"
    if "is required but missing" in rest:
        m = re.search(r"attribute '([^']*)'", rest)
        return f"{el}: missing required attribute '{m.group(1) if m else '?'}'"
    if "Character content other than whitespace is not allowed" in rest:
        return f"{el}: text is not allowed here ({el} may only contain child elements)"
    if "Element content is not allowed" in rest:
        return f"{el}: child elements are not allowed ({el} holds a plain value)"
    if "No matching global declaration" in rest:
        if elem is not None and "}" in str(elem.tag):
            return (f"{el}: DDS Security documents do not use an XML namespace; the root "
                    "must be a plain <dds>")
        return f"{el}: the root element must be <dds>"
    return f"{el}: {rest}"


def _schema_message(entry, elem) -> str:
    message = entry.message or ""
    m = _MSG_ELEMENT_RE.match(message)
    if not m:
        return message
    el = m.group("el").rsplit("}", 1)[-1]
    attr = m.group("attr")
    rest = message[m.end():].strip()
    if attr is not None:
        attr_local = attr.rsplit("}", 1)[-1]
        if "is not allowed" in rest:
            return f"{el}: attribute '{attr_local}' is not allowed"
        av = _ATOMIC_RE.match(rest)
        if av:
            return f"{el}: attribute '{attr_local}': {_show(av.group('value'))} is not valid"
        return f"{el}: attribute '{attr_local}': {rest}"
    em = _ENUM_RE.match(rest)
    if em:
        friendly = _enum_type_for(el)
        allowed = [v.strip().strip("'") for v in em.group("set").split(",")]
        if list(_ENUMS[friendly]) == allowed or set(_ENUMS[friendly]) == set(allowed):
            allowed = list(_ENUMS[friendly])
        else:
            friendly = "value"
        value = em.group("value")
        if elem is not None and len(elem) == 0:
            value = elem.text or ""
        return (f"{el}: {_show(value)} is not a valid {friendly}; allowed: "
                f"{', '.join(allowed)}{_did_you_mean(value, allowed)}")
    av = _ATOMIC_RE.match(rest)
    if av:
        return _value_message(el, elem, av.group("value"), av.group("type"))
    return _content_message(el, elem, rest)


def _schema_findings(doc: _Doc, kind: DocumentKind) -> list[Finding]:
    schema = _schema(kind)
    with _schema_lock:
        try:
            ok = schema.validate(doc.tree)
        except etree.XMLSchemaValidateError as err:  # libxml2 internal error
            line, col = doc.locate(doc.root)
            return [Finding(doc.filename, line, col, f"schema validation failed: {err}")]
        entries = list(schema.error_log)
    if ok:
        return []
    findings: list[Finding] = []
    seen: set[tuple[int, int, str]] = set()
    has_children: set = set()  # elements already reported for holding child elements
    for entry in entries:
        elem = doc.element_at_path(entry.path)
        if elem is not None:
            if "Element content is not allowed" in (entry.message or ""):
                has_children.add(elem)
            elif elem in has_children and "is not a valid value" in (entry.message or ""):
                continue  # the value error is a consequence of the child elements
        if elem is None:  # path not resolvable (e.g. namespaced root): fall back to the line
            m = _MSG_ELEMENT_RE.match(entry.message or "")
            local = m.group("el").rsplit("}", 1)[-1] if m else ""
            candidates = [e for e in doc.elements
                          if e.sourceline == entry.line and _local(e) == local]
            elem = candidates[0] if candidates else None
        message = _schema_message(entry, elem)
        if elem is not None:
            line, col = doc.locate(elem)
        else:
            line = doc.source.file_line(entry.line or 1)
            col = max(1, entry.column or 1)
        key = (line, col, message)
        if key in seen:
            continue
        seen.add(key)
        findings.append(Finding(doc.filename, line, col, message))
    if not findings:  # validation failed without a usable log entry
        line, col = doc.locate(doc.root)
        findings.append(Finding(doc.filename, line, col, "document is not schema-valid"))
    return findings


# --------------------------------------------------------------------------- lint

_DATETIME_RE = re.compile(
    r"^\s*(?P<y>-?\d{4,})-(?P<mo>\d{2})-(?P<d>\d{2})T(?P<h>\d{2}):(?P<mi>\d{2}):"
    r"(?P<s>\d{2})(?P<frac>\.\d+)?(?P<tz>Z|[+-]\d{2}:\d{2})?\s*$")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, for any year."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _datetime_key(text: str) -> Fraction | None:
    """Seconds since the epoch of an xs:dateTime (no timezone: taken as UTC)."""
    m = _DATETIME_RE.match(text or "")
    if not m:
        return None
    seconds = (_days_from_civil(int(m["y"]), int(m["mo"]), int(m["d"])) * 86400
               + int(m["h"]) * 3600 + int(m["mi"]) * 60 + int(m["s"]))
    value = Fraction(seconds) + (Fraction(m["frac"]) if m["frac"] else 0)
    tz = m["tz"]
    if tz and tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        value -= sign * (int(tz[1:3]) * 3600 + int(tz[4:6]) * 60)
    return value


def _int_text(elem) -> int | None:
    try:
        return int((elem.text or "").strip())
    except ValueError:
        return None


def _children(elem, name: str) -> list:
    return [c for c in elem if isinstance(c.tag, str) and _local(c) == name]


def _lint(doc: _Doc, kind: DocumentKind) -> list[Finding]:
    findings: list[Finding] = []
    for domains in doc.root.iter("domains"):
        for item in domains:
            if not isinstance(item.tag, str):
                continue
            if item.tag == "id":
                values = [item]
            elif item.tag == "id_range":
                values = _children(item, "min") + _children(item, "max")
                lo = _children(item, "min")
                hi = _children(item, "max")
                if lo and hi:
                    a, b = _int_text(lo[0]), _int_text(hi[0])
                    if a is not None and b is not None and a > b:
                        findings.append(doc.finding(item, (
                            f"lint/id-range-order: id_range min {a} is greater than max {b}; "
                            "the range selects no domain")))
            else:
                continue
            for v in values:
                n = _int_text(v)
                if n is not None and n > CYCLONE_MAX_DOMAIN_ID:
                    findings.append(doc.finding(v, (
                        f"lint/domain-range: domain id {n} in <{v.tag}> is above "
                        f"{CYCLONE_MAX_DOMAIN_ID}, the highest domain id Cyclone DDS accepts")))
    if kind is DocumentKind.GOVERNANCE:
        for expr in doc.root.iter("topic_expression"):
            if not (expr.text or "").strip():
                findings.append(doc.finding(expr, (
                    "lint/empty-topic-expression: topic_expression is empty, so this "
                    "topic_rule matches no topic")))
    else:
        for validity in doc.root.iter("validity"):
            nb, na = _children(validity, "not_before"), _children(validity, "not_after")
            if not (nb and na):
                continue
            a, b = _datetime_key(nb[0].text or ""), _datetime_key(na[0].text or "")
            if a is not None and b is not None and a >= b:
                findings.append(doc.finding(na[0], (
                    f"lint/validity-order: not_before {(nb[0].text or '').strip()} is not "
                    f"earlier than not_after {(na[0].text or '').strip()}; "
                    "the grant is never valid")))
        first_use: dict[str, int] = {}
        for grant in doc.root.iter("grant"):
            name = grant.get("name")
            if name is None:
                continue
            line, _ = doc.locate(grant)
            if name in first_use:
                findings.append(doc.finding(grant, (
                    f"lint/duplicate-grant-name: grant name {_show(name)} is already used "
                    f"by the grant on line {first_use[name]}")))
            else:
                first_use[name] = line
    return findings


# --------------------------------------------------------------------------- entry points


def _kind_from_filename(filename: str) -> DocumentKind | None:
    base = Path(filename).name.lower()
    if "permission" in base:
        return DocumentKind.PERMISSIONS
    if "govern" in base:
        return DocumentKind.GOVERNANCE
    return None


def _cap(findings: list[Finding]) -> list[Finding]:
    findings = sorted(findings, key=lambda f: (f.line, f.column))
    if len(findings) > MAX_FINDINGS:
        rest = len(findings) - MAX_FINDINGS
        last = findings[MAX_FINDINGS - 1]
        findings = findings[:MAX_FINDINGS] + [Finding(
            last.file, last.line, last.column,
            f"too many problems: {rest} more not shown")]
    return findings


def validate_bytes(data: bytes, filename: str, kind: DocumentKind | None = None) -> list[Finding]:
    """Validate one document (plain XML or S/MIME multipart/signed); [] means valid.

    Runs the safe parser, the XSD of the detected (or given) kind and, if the document is
    schema-valid, the lint rules. Line numbers of S/MIME input point into the wrapper.
    """
    data = bytes(data)
    if len(data) > MAX_DOCUMENT_BYTES:
        return [_too_large(filename, len(data))]
    split = _split_smime(data)
    if isinstance(split, str):
        return [Finding(filename, 1, 1, split)]
    body, offset = split if split is not None else (data, 0)
    try:
        doc = _parse(body, filename, offset)
    except DocumentError as err:
        return err.findings
    if kind is None:
        try:
            kind = document_kind(doc.root)
        except DocumentError as err:
            kind = _kind_from_filename(filename)
            if kind is None:
                line, col = doc.locate(doc.root)
                return [Finding(filename, line, col, err.findings[0].message)]
    kind = DocumentKind(kind)
    findings = _schema_findings(doc, kind)
    if not findings:
        findings = _lint(doc, kind)
    return _cap(findings)


def validate_file(path: Path) -> list[Finding]:
    """Read and validate one file. GovkitError (exit 2) if it cannot be read or is too large."""
    path = Path(path)
    try:
        if path.is_dir():
            raise GovkitError(f"{path}: is a directory, not a document", EXIT_USAGE)
        with open(path, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except GovkitError:
        raise
    except OSError as err:
        raise GovkitError(f"{path}: cannot read: {err.strerror or err}", EXIT_USAGE) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise GovkitError(
            f"{path}: file is too large (more than {MAX_DOCUMENT_BYTES} bytes)", EXIT_USAGE)
    return validate_bytes(data, str(path))
