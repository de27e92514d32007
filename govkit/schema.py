"""Validation stage: safe XML parsing, XSD validation against govkit's own DDS Security 1.1
schemas (``schemas/governance.xsd``, ``schemas/permissions.xsd``) and a small lint pass.

Every problem is a :class:`Finding` printed as ``FILE:LINE:COLUMN: message``. Lines and
columns are 1-based and point at the ``<`` of the element's start tag. For S/MIME
(``multipart/signed``) files the line numbers point into the wrapper file, not into the
extracted XML.

This module holds the XSD step, its friendly messages and the public entry points. Safe
parsing, source positions and S/MIME unwrapping live in :mod:`govkit.xmlsource` (see there
for how hostile input is refused); the lint rules, listed in :mod:`govkit.lint`, run only
when the document is schema-valid.
"""

from __future__ import annotations

import difflib
import re
import threading
from functools import cache
from pathlib import Path

from lxml import etree

from govkit.errors import EXIT_USAGE, GovkitError
from govkit.findings import DocumentError, DocumentKind, Finding, _show
from govkit.lint import _DATETIME_RE, CYCLONE_MAX_DOMAIN_ID, _lint
from govkit.paths import SCHEMAS_DIR
from govkit.xmlsource import (
    MAX_DOCUMENT_BYTES,
    _Doc,
    _local,
    _looks_like_mime,
    _make_parser,
    _parse,
    _split_smime,
    _too_large,
    unwrap_smime,
)

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

MAX_FINDINGS = 200  # beyond this, one summary finding replaces the rest

_SCHEMA_FILES = {
    DocumentKind.GOVERNANCE: "governance.xsd",
    DocumentKind.PERMISSIONS: "permissions.xsd",
}
_KIND_CHILD = {
    "domain_access_rules": DocumentKind.GOVERNANCE,
    "permissions": DocumentKind.PERMISSIONS,
}


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
