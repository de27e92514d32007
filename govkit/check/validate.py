"""Validation: safe XML parsing, XSD validation against govkit's own DDS Security 1.1
schemas (govkit.check.xsd) and validate's lint pass (govkit.check.rules).

Every problem is a :class:`Finding` printed as ``FILE:LINE:COLUMN: message``. Lines and
columns are 1-based and point at the ``<`` of the element's start tag. For S/MIME files the
line numbers point into the S/MIME file, not into the extracted XML.

This module holds the public entry points; the XSD step and its friendly messages are in
:mod:`govkit.check.xsd`. Safe parsing and source positions live in
:mod:`govkit.documents.parse`, S/MIME reading (exactly as OpenSSL reads it) in
:mod:`govkit.documents.mime`; the lint rules, listed in :mod:`govkit.check.lint`, run only
when the document is schema-valid, as the chosen target (`lint --target`, default omg)
reads the document: one verdict per target in validate, sign and lint. Every step is
linear in the input, and the number of findings worked out in detail is capped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.targets import DEFAULT_TARGET, PORTABLE_TARGET, TARGETS, VENDOR_TARGETS
from govkit.check.rules.engine import lint_findings
from govkit.check.xsd import cap_findings, xsd_findings
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentError, DocumentKind, Finding
from govkit.common.inputs import read_input, too_large_message
from govkit.common.limits import MAX_DOCUMENT_BYTES, MAX_SMIME_BYTES
from govkit.documents import mime
from govkit.documents.parse import (
    ParsedDocument,
    local_name,
    parse_xml,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "DocumentCheck",
    "DocumentError",
    "DocumentKind",
    "Finding",
    "check_bytes",
    "check_file",
    "document_kind",
    "portable_findings",
    "read_document",
    "signed_document",
    "validate_bytes",
]

_KIND_CHILD = {
    "domain_access_rules": DocumentKind.GOVERNANCE,
    "permissions": DocumentKind.PERMISSIONS,
}


_NOT_PLAIN_XML = ("this is a MIME (S/MIME) message, not a plain XML document (a signed "
                  "file renamed, or signed twice?)")


def document_kind(root) -> DocumentKind:
    """Governance or permissions, from the root's children; DocumentError if neither."""
    if hasattr(root, "getroot"):
        root = root.getroot()
    for child in root:
        kind = _KIND_CHILD.get(local_name(child))
        if kind is not None:
            return kind
    filename = root.getroottree().docinfo.URL or "<document>"
    crash = ""
    if not any(isinstance(child.tag, str) for child in root):   # an empty root (GK303's)
        crashing = [t for t in VENDOR_TARGETS if local_name(root) in t.crashes_on_empty]
        if crashing:
            crash = (f"; empty, it crashes {' and '.join(t.title for t in crashing)} "
                     f"({'; '.join(dict.fromkeys(t.crash_source for t in crashing))})")
    raise DocumentError([Finding(
        filename, root.sourceline or 1, 1,
        f"cannot tell the document kind: <{local_name(root)}> has neither a <domain_access_rules> "
        f"child (governance) nor a <permissions> child (permissions){crash}")])


def _kind_from_filename(filename: str) -> DocumentKind | None:
    base = Path(filename).name.lower()
    if "permission" in base:
        return DocumentKind.PERMISSIONS
    if "govern" in base:
        return DocumentKind.GOVERNANCE
    return None


@dataclass
class DocumentCheck:
    """What validating one document found; `kind` is known once it parsed, `document` is
    the parsed tree (for the stages that go on reading it: lint, identify, explain, diff).
    `findings` make it invalid; `warnings` (what an implementation other than the target's
    refuses, e.g. domain 231 under the omg target) do not."""
    findings: list[Finding]
    kind: DocumentKind | None = None
    document: ParsedDocument | None = None
    warnings: list[Finding] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.findings


@dataclass
class SignedDocument:
    """The document inside an S/MIME file, and where its lines are in that file."""
    data: bytes
    line_offset: int
    label: str


def signed_document(data: bytes, filename: str) -> SignedDocument:
    """The document an S/MIME file carries, as OpenSSL extracts it (its signature is NOT
    checked here); DocumentError if OpenSSL would not read the file."""
    try:
        message = mime.read_smime(data)
        if message.content is not None:
            body, start = mime.text_body(message.content.data)
            before = data.count(b"\n", 0, message.content.offset)
            return SignedDocument(body, before + message.content.data.count(b"\n", 0, start),
                                  filename)
        # Opaque signed data: the document is inside the base64 signature, so its lines
        # are lines of that signed content, not of the file.
        body, _ = mime.text_body(mime.opaque_content(message.signature()))
        return SignedDocument(body, 0, f"{filename} (signed content)")
    except mime.MimeError as e:
        raise DocumentError([Finding(filename, 1, 1, f"S/MIME: {e}")]) from None


def check_bytes(data: bytes, filename: str, kind: DocumentKind | None = None,
                allow_smime: bool = True, lint: bool = True,
                line_offset: int = 0, target: str = DEFAULT_TARGET) -> DocumentCheck:
    """Validate one document; plain XML, or (if `allow_smime`) the document inside an
    S/MIME file. Runs the safe parser, the XSD of the detected (or given) kind and, if the
    document is schema-valid and `lint` is true, validate's lint rules as `target` (a
    catalog.targets name, as `lint --target`) reads the document. Line numbers of
    S/MIME input point into it; `line_offset` lines are added to those of plain XML (a
    caller that extracted it from a file says where it starts, so lines are the file's).
    The XSD is the specification's under every target (lint alone reads a vendor's
    lenient spellings, GK301/GK302).
    """
    if target not in TARGETS:
        raise GovkitError(f"unknown target {target!r}; valid targets: {', '.join(TARGETS)}")
    data = bytes(data)
    if len(data) > MAX_SMIME_BYTES:
        return DocumentCheck([Finding(filename, 1, 1, too_large_message(
            len(data), MAX_SMIME_BYTES, "input"))])
    offset = line_offset
    if mime.looks_like_mime(data):
        if not allow_smime:
            return DocumentCheck([Finding(filename, 1, 1, _NOT_PLAIN_XML)])
        try:
            inner = signed_document(data, filename)
        except DocumentError as err:
            return DocumentCheck(err.findings)
        data, offset, filename = inner.data, inner.line_offset, inner.label
    try:
        doc = parse_xml(data, filename, offset)
    except DocumentError as err:
        return DocumentCheck(err.findings)
    if kind is None:
        try:
            kind = document_kind(doc.root)
        except DocumentError as err:
            kind = _kind_from_filename(filename)
            if kind is None:
                line, col = doc.locate(doc.root)
                return DocumentCheck([Finding(filename, line, col, err.findings[0].message)],
                                     document=doc)
    kind = DocumentKind(kind)
    findings, not_shown = xsd_findings(doc, kind)
    warnings: list[Finding] = []
    if not findings and lint:
        findings, warnings = lint_findings(doc, kind, target)
    return DocumentCheck(cap_findings(findings, not_shown), kind, doc, warnings)


def validate_bytes(data: bytes, filename: str, kind: DocumentKind | None = None,
                   allow_smime: bool = True, target: str = DEFAULT_TARGET) -> list[Finding]:
    """Validate one document (see check_bytes); [] means valid under `target`."""
    return check_bytes(data, filename, kind, allow_smime, target=target).findings


def portable_findings(data: bytes, filename: str, kind: DocumentKind | None = None
                      ) -> list[Finding]:
    """What keeps a plain-XML document from loading in every implementation the target
    table knows: its findings and its warnings under the omg target (which warns about
    each implementation that would refuse it). Documents govkit writes must have none."""
    check = check_bytes(data, filename, kind, allow_smime=False, target=PORTABLE_TARGET)
    return check.findings + check.warnings


def read_document(path: Path) -> bytes:
    """The bytes of a document or S/MIME file. GovkitError (exit 2) if it cannot be read,
    is not a regular file, or is too large."""
    path = Path(path)
    data = read_input(path, MAX_SMIME_BYTES, "document")
    if len(data) > MAX_DOCUMENT_BYTES and not mime.looks_like_mime(data):
        raise GovkitError(f"{path}: {too_large_message(len(data), MAX_DOCUMENT_BYTES, 'document')}",
                          EXIT_USAGE)
    return data


def check_file(path: Path, target: str = DEFAULT_TARGET) -> DocumentCheck:
    """Read and validate one file under `target`: its findings and its warnings
    (GovkitError, exit 2, if it cannot be read)."""
    return check_bytes(read_document(path), str(path), target=target)
