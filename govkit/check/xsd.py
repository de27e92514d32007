"""The XSD step: govkit's own DDS Security 1.1 schemas (``schemas/governance.xsd``,
``schemas/permissions.xsd``) and libxml2's findings made readable.

libxml2 reports schema errors in English sentences about expanded names; this module turns
each into one line at the element's start tag that says what was expected and, for a
misspelt value or element, what was probably meant. Only the first MAX_FINDINGS problems
are worked out; the rest are counted, so a hostile document costs no more than a bad one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lxml import etree

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind, Finding, quote_value
from govkit.common.paths import SCHEMA_FILES, SCHEMAS_DIR
from govkit.documents.model import is_xml_datetime
from govkit.documents.parse import ParsedDocument, local_name, safe_parser, text_value

__all__ = ["MAX_FINDINGS", "cap_findings", "schema_findings", "xsd_findings", "xsd_schema"]

MAX_FINDINGS = 200  # beyond this, one summary finding replaces the rest

_schema_lock = threading.Lock()


@cache
def _xsd_document(kind: DocumentKind):
    """govkit's XSD for `kind`, parsed once for both the validator and schema_facts."""
    path = Path(SCHEMAS_DIR) / SCHEMA_FILES[kind.value]
    try:
        return etree.parse(str(path), safe_parser())
    except OSError as err:
        raise GovkitError(f"{path}: cannot read the {kind.value} schema: {err}",
                          EXIT_USAGE) from None
    except etree.XMLSyntaxError as err:
        raise GovkitError(f"{path}: broken {kind.value} schema: {err}", EXIT_USAGE) from None


@cache
def xsd_schema(kind: DocumentKind) -> etree.XMLSchema:
    try:
        return etree.XMLSchema(_xsd_document(kind))
    except etree.XMLSchemaParseError as err:
        path = Path(SCHEMAS_DIR) / SCHEMA_FILES[kind.value]
        raise GovkitError(f"{path}: broken {kind.value} schema: {err}", EXIT_USAGE) from None


_BOOLEAN_VALUES = ("true", "false", "1", "0")     # xs:boolean's lexical space (XSD 1.0)
# The simple types' names in messages: the schema's facts (values, child order) are read
# from the schema itself (schema_facts), never restated here.
_FRIENDLY = {"ProtectionKindEnum": "ProtectionKind",
             "BasicProtectionKindEnum": "BasicProtectionKind",
             "DefaultVerdict": "DefaultAction"}
_XS = "{http://www.w3.org/2001/XMLSchema}"


@dataclass(frozen=True)
class SchemaFacts:
    enums: dict[str, tuple[str, ...]]          # friendly type name -> allowed values
    element_enum: dict[str, str]               # element name -> friendly type name
    order: dict[str, tuple[str, ...]]          # element name -> its children, in order
    booleans: frozenset[str]                   # elements of type xs:boolean


@cache
def schema_facts() -> SchemaFacts:
    """What the messages say about enumerations and child order, read from govkit's two
    XSDs (named complex types; an element's children in declaration order)."""
    enums: dict[str, tuple[str, ...]] = {}
    element_enum: dict[str, str] = {}
    order: dict[str, tuple[str, ...]] = {}
    booleans: set[str] = set()
    for kind in (DocumentKind.GOVERNANCE, DocumentKind.PERMISSIONS):
        root = _xsd_document(kind).getroot()
        types = {t.get("name"): t for t in root.iter(f"{_XS}complexType") if t.get("name")}
        for simple in root.iter(f"{_XS}simpleType"):
            if simple.get("name") in _FRIENDLY:
                enums[_FRIENDLY[simple.get("name")]] = tuple(
                    e.get("value") for e in simple.iter(f"{_XS}enumeration"))
        for element in root.iter(f"{_XS}element"):
            name, type_name = element.get("name"), element.get("type")
            if type_name in _FRIENDLY:
                element_enum[name] = _FRIENDLY[type_name]
            elif type_name == "xs:boolean":
                booleans.add(name)
            body = types.get(type_name)
            if body is not None and name not in order:
                children = (e.get("name") for e in body.iter(f"{_XS}element"))
                order[name] = tuple(dict.fromkeys(children))
    return SchemaFacts(enums, element_enum, order, frozenset(booleans))


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

_ELEMENT_PREFIX = "Element '"
_ATOMIC_MARK = "' is not a valid value of the "
_ENUM_PREFIX = "[facet 'enumeration'] The value '"
_ENUM_MARK = "' is not an element of the set {"


def _split_element(message: str) -> tuple[str, str | None, str] | None:
    """libxml2's "Element 'E'[, attribute 'A']: rest" as (E, A, rest), or None."""
    if not message.startswith(_ELEMENT_PREFIX):
        return None
    end = message.find("'", len(_ELEMENT_PREFIX))
    if end < 0:
        return None
    el, rest, attr = message[len(_ELEMENT_PREFIX):end], message[end + 1:], None
    if rest.startswith(", attribute '"):
        a_end = rest.find("'", len(", attribute '"))
        if a_end < 0:
            return None
        attr, rest = rest[len(", attribute '"):a_end], rest[a_end + 1:]
    if not rest.startswith(": "):
        return None
    return el, attr, rest[2:].strip()


def _atomic(rest: str) -> tuple[str, str] | None:
    """"'V' is not a valid value of the [local ]atomic|list|union type 'T'." as (V, T)."""
    mark = rest.rfind(_ATOMIC_MARK)
    if not rest.startswith("'") or mark < 1:
        return None
    tail = rest[mark + len(_ATOMIC_MARK):].removeprefix("local ")
    for kind in ("atomic type ", "list type ", "union type "):
        if tail.startswith(kind):
            return rest[1:mark], tail[len(kind):].rstrip(".").strip("'")
    return None


def _enumeration(rest: str) -> tuple[str, list[str]] | None:
    """"[facet 'enumeration'] The value 'V' is not an element of the set {'A', ...}." """
    mark = rest.rfind(_ENUM_MARK)
    if not rest.startswith(_ENUM_PREFIX) or mark < len(_ENUM_PREFIX) - 1:
        return None
    allowed = rest[mark + len(_ENUM_MARK):].rstrip(".").removesuffix("}")
    return (rest[len(_ENUM_PREFIX):mark],
            [v.strip().strip("'") for v in allowed.split(",")])


def _expected_names(message: str) -> list[str]:
    at = message.find("Expected is ")
    if at < 0:
        return []
    rest = message[at + len("Expected is "):].removeprefix("one of ")
    if not rest.startswith("( ") or " )" not in rest:
        return []
    names = rest[2:rest.index(" )")]
    return [n.strip().rsplit("}", 1)[-1] for n in names.split(",") if n.strip()]


def _expected_text(names: list[str]) -> str:
    if len(names) == 1:
        return f"expected {names[0]}"
    return "expected one of " + ", ".join(names)


def _did_you_mean(value: str, allowed: tuple[str, ...] | list[str]) -> str:
    stripped = value.strip()
    if stripped in allowed and stripped != value:
        return " (remove the surrounding whitespace)"
    for a in allowed:
        if a.lower() == stripped.lower():
            return f" (values are case-sensitive: did you mean {a}?)"
    import difflib  # only for a misspelt name (start-up)
    close = difflib.get_close_matches(stripped, allowed, n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


def _value_message(el: str, elem, value: str, type_name: str) -> str:
    if elem is not None and len(elem) == 0:
        value = text_value(elem)
    base = type_name.rsplit("}", 1)[-1]
    if base in ("xs:boolean", "boolean"):
        hint = ""
        if value.strip().lower() in ("true", "false"):
            hint = f" (booleans are lowercase: use {value.strip().lower()})"
        return (f"{el}: {quote_value(value)} is not an xs:boolean; allowed: "
                f"{', '.join(_BOOLEAN_VALUES)}{hint}")
    if base in ("xs:dateTime", "dateTime"):
        hint = ""
        if value != value.strip() and is_xml_datetime(value.strip()):
            # XSD collapses whitespace here, but libxml2 (xmllint, lxml) does not.
            hint = " (remove the surrounding whitespace: libxml2-based validators reject it)"
        return (f"{el}: {quote_value(value)} is not an xs:dateTime; expected "
                f"YYYY-MM-DDThh:mm:ss[.fff][Z|(+|-)hh:mm], e.g. 2030-01-01T00:00:00Z{hint}")
    if base in ("DomainIdNumber", "xs:nonNegativeInteger", "nonNegativeInteger"):
        return (f"{el}: {quote_value(value)} is not a valid domain id; expected a non-negative "
                "integer (xs:nonNegativeInteger)")
    if base in ("ProtectionKindEnum", "BasicProtectionKindEnum", "DefaultVerdict"):
        friendly = {"ProtectionKindEnum": "ProtectionKind",
                    "BasicProtectionKindEnum": "BasicProtectionKind",
                    "DefaultVerdict": "DefaultAction"}[base]
        allowed = schema_facts().enums[friendly]
        return (f"{el}: {quote_value(value)} is not a valid {friendly}; allowed: "
                f"{', '.join(allowed)}{_did_you_mean(value, allowed)}")
    return f"{el}: {quote_value(value)} is not a valid value of type {base}"


def _content_message(doc: ParsedDocument, el: str, elem, rest: str) -> str:
    names = _expected_names(rest)
    parent = elem.getparent() if elem is not None else None
    parent_name = local_name(parent) if parent is not None else ""
    siblings = doc.child_names(parent)[1] if parent is not None else {}
    order = schema_facts().order.get(parent_name, ())
    foreign = _FOREIGN_IN.get((parent_name, el)) or _FOREIGN.get(el)
    if foreign:
        hint = f" ({el} is {foreign}, not part of DDS Security 1.1)"
    elif any(n.lower() == el.lower() and n != el for n in (names or order)):
        hint = " (element names are case-sensitive)"
    else:
        hint = ""

    if "Missing child element(s)" in rest:
        own = doc.child_names(elem)[1] if elem is not None else {}
        if el in ("publish", "subscribe", "relay") and not own.get("topics"):
            return f"{el}: missing child element; expected topics (required)"
        return f"{el}: missing child element; {_expected_text(names)}" if names else \
            f"{el}: missing child element(s)"
    if "This element is not expected" in rest:
        if not names:
            if not foreign and siblings.get(el, 0) > 1 and (
                    el in order or parent_name in ("publish", "subscribe", "relay")):
                return f"{el}: element not allowed here (duplicate {el}?){hint}"
            return f"{el}: element not allowed here{hint}"
        expected = _expected_text(names)
        if el not in order:
            return f"{el}: unexpected element; {expected}{hint}"
        missing = [n for n in names if not siblings.get(n)]
        if (siblings.get(el, 0) > 1 and names[0] in order
                and order.index(el) < order.index(names[0])):
            return f"{el}: duplicate element; {expected} here"
        if len(names) == 1 and missing:
            return f"{el}: unexpected element; {expected} ({names[0]} is missing)"
        order_text = _ORDER_TEXT.get(parent_name, ", ".join(order))
        return f"{el}: out of order; {expected} here (order in {parent_name}: {order_text})"
    if "is required but missing" in rest:
        at = rest.find("attribute '")
        end = rest.find("'", at + len("attribute '")) if at >= 0 else -1
        name = rest[at + len("attribute '"):end] if end >= 0 else "?"
        return f"{el}: missing required attribute '{name}'"
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


def _schema_message(doc: ParsedDocument, entry, elem) -> str:
    message = entry.message or ""
    parts = _split_element(message)
    if parts is None:
        return message
    el, attr, rest = parts
    el = el.rsplit("}", 1)[-1]
    if attr is not None:
        attr_local = attr.rsplit("}", 1)[-1]
        if "is not allowed" in rest:
            return f"{el}: attribute '{attr_local}' is not allowed"
        av = _atomic(rest)
        if av:
            return f"{el}: attribute '{attr_local}': {quote_value(av[0])} is not valid"
        return f"{el}: attribute '{attr_local}': {rest}"
    em = _enumeration(rest)
    if em:
        value, allowed = em
        friendly = schema_facts().element_enum.get(el, "ProtectionKind")
        known = schema_facts().enums[friendly]
        if list(known) == allowed or set(known) == set(allowed):
            allowed = list(known)
        else:
            friendly = "value"
        if elem is not None and len(elem) == 0:
            value = text_value(elem)
        return (f"{el}: {quote_value(value)} is not a valid {friendly}; allowed: "
                f"{', '.join(allowed)}{_did_you_mean(value, allowed)}")
    av = _atomic(rest)
    if av:
        return _value_message(el, elem, av[0], av[1])
    return _content_message(doc, el, elem, rest)


def xsd_findings(doc: ParsedDocument, kind: DocumentKind) -> tuple[list[Finding], int]:
    """The schema's findings (at most MAX_FINDINGS), and how many more were not shown."""
    schema = xsd_schema(kind)
    with _schema_lock:
        try:
            ok = schema.validate(doc.tree)
        except etree.XMLSchemaValidateError as err:  # libxml2 internal error
            line, col = doc.locate(doc.root)
            return [Finding(doc.filename, line, col, f"schema validation failed: {err}")], 0
        entries = schema.error_log
    if ok:
        return [], 0
    findings: list[Finding] = []
    seen: set[tuple[int, int, str]] = set()
    has_children: set = set()  # elements already reported for holding child elements
    not_shown = 0
    for entry in entries:
        # Only the first MAX_FINDINGS problems are worked out (libxml2 reports them in
        # document order); the rest are counted, so 100,000 errors cost no more than 200.
        if len(findings) >= MAX_FINDINGS:
            not_shown += 1
            continue
        text = entry.message or ""
        elem = doc.element_at_path(entry.path)
        if elem is not None:
            if "Element content is not allowed" in text:
                has_children.add(elem)
            elif elem in has_children and "is not a valid value" in text:
                continue  # the value error is a consequence of the child elements
        if elem is None:  # path not resolvable (e.g. namespaced root): fall back to the line
            parts = _split_element(text)
            elem = doc.element_on_line(entry.line, parts[0].rsplit("}", 1)[-1]) \
                if parts else None
        message = _schema_message(doc, entry, elem)
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
    return findings, not_shown


def cap_findings(findings: list[Finding], not_shown: int = 0) -> list[Finding]:
    findings = sorted(findings, key=lambda f: (f.line, f.column))
    if len(findings) > MAX_FINDINGS or not_shown:
        rest = len(findings) - MAX_FINDINGS + not_shown if len(findings) > MAX_FINDINGS \
            else not_shown
        last = findings[min(len(findings), MAX_FINDINGS) - 1]
        findings = findings[:MAX_FINDINGS] + [Finding(
            last.file, last.line, last.column,
            f"too many problems: {rest} more not shown")]
    return findings


def schema_findings(doc: ParsedDocument, kind: DocumentKind) -> list[Finding]:
    """The XSD findings of an already parsed document (capped as check_bytes caps them);
    lint uses it to validate again after reading the document as a vendor would."""
    return cap_findings(*xsd_findings(doc, DocumentKind(kind)))
