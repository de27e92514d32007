"""Read an sros2 policy and its protection sidecar, or refuse them with one FILE:LINE:COLUMN
line per problem.

A policy is read with its XIncludes expanded (govkit.documents.xinclude: every element
keeps the file and line it was written at), validated against govkit's
schemas/sros2_policy.xsd (the documents sros2's policy.xsd accepts), and only then modelled
(govkit.documents.ros_policy). A protection sidecar is validated against
schemas/protection.xsd. The same <protection> may instead sit in the policy's
<profiles><metadata> (sros2 reads metadata as anything and ignores it): each copy there is
validated the same way, and all copies, and a sidecar given beside them, must agree.

Every problem is a Finding; `PolicyInvalid` carries them all (exit 2, nothing written).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lxml import etree

from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentError, Finding, quote_value
from govkit.common.paths import SCHEMAS_DIR
from govkit.documents.parse import local_name, safe_parser
from govkit.documents.protection import Protection, ProtectionProblem, read_protection
from govkit.documents.ros_names import CATEGORIES
from govkit.documents.ros_policy import Policy, read_policy
from govkit.documents.xinclude import MergedDocument, load_merged

POLICY_SCHEMA = "sros2_policy.xsd"
PROTECTION_SCHEMA = "protection.xsd"
MAX_SHOWN = 50


class PolicyInvalid(GovkitError):
    """A policy or sidecar that cannot be used: its findings, one FILE:LINE:COLUMN line
    each, as validate prints them (the error's details; exit 2)."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings[:MAX_SHOWN]
        if len(findings) > MAX_SHOWN:
            last = findings[MAX_SHOWN - 1]
            self.findings.append(Finding(last.file, last.line, last.column,
                                         f"… and {len(findings) - MAX_SHOWN} more problems"))
        super().__init__("", EXIT_USAGE, details=list(map(str, self.findings)))


@dataclass
class RosInput:
    """A checked policy and the protection that applies to it (None: no sidecar and none
    embedded)."""
    policy_doc: MergedDocument
    policy: Policy
    protection: Protection | None
    protection_doc: MergedDocument | None      # the document holding `protection`
    protection_source: str                      # the sidecar file, or where it is embedded

    @property
    def source(self) -> str:
        return self.policy_doc.filename


@cache
def _schema(name: str) -> etree.XMLSchema:
    path = Path(SCHEMAS_DIR) / name
    try:
        return etree.XMLSchema(etree.parse(str(path), safe_parser()))
    except (OSError, etree.XMLSyntaxError, etree.XMLSchemaParseError) as e:
        raise GovkitError(f"{path}: cannot read govkit's schema: {e}", EXIT_USAGE) from None


def _quoted_set(text: str) -> str:
    return ", ".join(v.strip().strip("'") for v in text.strip("{}. ").split(","))


def _message(entry, elem) -> tuple[str, str]:
    """(dedup key, one sentence) for one libxml2 schema error."""
    text = (entry.message or "").strip()
    el, attr, rest = None, None, text
    if text.startswith("Element '"):
        end = text.find("'", 9)
        el, rest = text[9:end], text[end + 1:]
        if rest.startswith(", attribute '"):
            a_end = rest.find("'", 13)
            attr, rest = rest[13:a_end], rest[a_end + 1:]
        rest = rest.removeprefix(":").strip()
    el = (el or (local_name(elem) if elem is not None else "document")).rsplit("}", 1)[-1]
    attr = attr.rsplit("}", 1)[-1] if attr else None
    if attr is not None:
        key = f"{el}@{attr}"
        if "[facet 'enumeration']" in rest:
            value = rest.split("The value '", 1)[-1].split("'", 1)[0]
            allowed = _quoted_set(rest.split("set ", 1)[-1])
            return key, f"{el}: {attr}={quote_value(value)} is unknown; one of: {allowed}"
        if "fixed value constraint" in rest:
            value = rest.split("The value '", 1)[-1].split("'", 1)[0]
            fixed = rest.rsplit("'", 2)[-2]
            return key, f"{el}: {attr}={quote_value(value)}: govkit reads version {fixed}"
        if "is not allowed" in rest:
            return key, f"{el}: attribute {attr!r} is not allowed here"
        if "is not a valid value of" in rest:
            value = rest.split("'", 2)[1] if rest.startswith("'") else "?"
            kind = rest.rsplit("type '", 1)[-1].rstrip("'.")
            return key, f"{el}: {attr}={quote_value(value)} is not a valid {kind}"
        return key, f"{el}: attribute {attr!r}: {rest}"
    if "is required but missing" in rest:
        name = rest.split("attribute '", 1)[-1].split("'", 1)[0]
        return f"{el}@{name}", f"{el}: missing required attribute {name!r}"
    expected = ""
    if "Expected is" in rest:
        names = rest.split("Expected is", 1)[1].strip(" .").removeprefix("one of").strip(" ()")
        expected = "; expected " + ", ".join(n.strip().rsplit("}", 1)[-1]
                                             for n in names.split(","))
    if "Missing child element" in rest:
        return el, f"{el}: missing child element{expected}"
    if "This element is not expected" in rest:
        return el, f"{el}: element not allowed here{expected}"
    if "[facet 'pattern']" in rest and el in CATEGORIES.values():
        return el, f"{el}: an empty or blank name (it would make an empty topic_expression, " \
                   f"which Fast DDS 2.9's parser crashes on)"
    if "Character content other than whitespace" in rest:
        return el, f"{el}: text is not allowed here"
    return el, f"{el}: {rest}"


def schema_findings(doc: MergedDocument, schema: str, root=None) -> list[Finding]:
    """The findings of validating `root` (default: the document's root) against one of
    govkit's schemas, each at its element's own file and line."""
    root = doc.root if root is None else root
    xsd = _schema(schema)
    if xsd.validate(root):
        return []
    findings, seen = [], set()
    for entry in xsd.error_log:
        elem = doc.element_at_path(entry.path, root)
        key, message = _message(entry, elem)
        found = doc.finding(elem, message) if elem is not None else Finding(
            doc.file_of(root), entry.line or 1, max(1, entry.column or 1), message)
        if (found.file, found.line, found.column, key) in seen:
            continue
        seen.add((found.file, found.line, found.column, key))
        findings.append(found)
    return findings


def _root_finding(doc: MergedDocument, want: str, what: str) -> list[Finding]:
    root = doc.root
    if local_name(root) == want and "}" not in str(root.tag):
        return []
    return [doc.finding(root, f"{local_name(root)}: the root element of {what} is <{want}> "
                              f"(no XML namespace)")]


def _merged(path: Path, data: bytes | None = None) -> MergedDocument:
    try:
        return load_merged(path, data)
    except DocumentError as e:
        raise PolicyInvalid(e.findings) from None


def _protection(doc: MergedDocument, elem) -> tuple[Protection | None, list[Finding]]:
    findings = schema_findings(doc, PROTECTION_SCHEMA, elem)
    if findings:
        return None, findings
    try:
        return read_protection(elem), []
    except ProtectionProblem as e:
        return None, [doc.finding(e.elem, f"{local_name(e.elem)}: {e}")]


def load_protection(path: Path, data: bytes | None = None
                    ) -> tuple[MergedDocument, Protection]:
    """A protection sidecar file (`data`: its bytes, read already), checked. PolicyInvalid
    with its findings."""
    doc = _merged(path, data)
    findings = _root_finding(doc, "protection", "a protection file")
    protection = None
    if not findings:
        protection, findings = _protection(doc, doc.root)
    if findings:
        raise PolicyInvalid(findings)
    return doc, protection


def load_policy(path: Path, protection_path: Path | None = None,
                need_protection: bool = False, data: bytes | None = None) -> RosInput:
    """An sros2 policy (XIncludes expanded), checked, with the protection that applies:
    the sidecar at `protection_path`, else the copies in its <metadata>. PolicyInvalid with
    every finding (of the policy, its includes and the sidecar); `data`: the policy's
    bytes, read already."""
    doc = _merged(path, data)
    findings = _root_finding(doc, "policy", "an sros2 policy") or \
        schema_findings(doc, POLICY_SCHEMA)
    policy = read_policy(doc.root) if not findings else None
    sidecar_doc, sidecar = None, None
    if protection_path is not None:
        try:
            sidecar_doc, sidecar = load_protection(protection_path)
        except PolicyInvalid as e:
            findings += e.findings
    if policy is not None:
        findings += [doc.finding(e.elem, f"enclave: path {quote_value(e.path)}: "
                                         f"{problem}")
                     for e in policy.enclaves if (problem := enclave_problem(e.path))]
        seen: dict[str, object] = {}
        for e in policy.enclaves:
            if e.path in seen:
                findings.append(doc.finding(e.elem, f"enclave: path {quote_value(e.path)} "
                                                    f"again (first on line "
                                                    f"{doc.locate(seen[e.path])[0]}): one "
                                                    f"enclave, one identity, one grant"))
            seen.setdefault(e.path, e.elem)
    embedded: list[tuple[object, Protection]] = []
    for elem in policy.embedded if policy is not None else ():
        found, problems = _protection(doc, elem)
        findings += problems
        if found is not None:
            embedded.append((elem, found))
    chosen = sidecar or (embedded[0][1] if embedded else None)
    for elem, other in embedded:
        if chosen is not None and not other.same_as(chosen):
            first = protection_path or "the first <protection> in <metadata>"
            where = (f"{first}" if sidecar is not None else
                     f"the one on line {doc.locate(embedded[0][0])[0]} of "
                     f"{doc.file_of(embedded[0][0])}")
            findings.append(doc.finding(elem, f"protection: differs from {where}; every "
                                              f"copy must say the same"))
    if findings:
        raise PolicyInvalid(findings)
    if chosen is None and need_protection:
        raise GovkitError(f"{path}: no protection: give --protection FILE (or put a "
                          f"<protection> in the policy's <profiles><metadata>)", EXIT_USAGE)
    if sidecar is not None:
        source = str(protection_path)
        protection_doc = sidecar_doc
    elif embedded:
        source = f"embedded in {path}"
        protection_doc = doc
    else:
        source, protection_doc = "none", None
    return RosInput(doc, policy, chosen, protection_doc, source)


def enclave_problem(path: str) -> str | None:
    """Why govkit cannot give this enclave path an identity (None: it can)."""
    from govkit.pki.ros import is_enclave
    if is_enclave(path):
        return None
    return ("govkit names each enclave's identity by its path: '/' and names of letters, "
            "digits and '_' not starting with a digit, at most 64 characters (the root "
            "enclave '/' is not written)")
