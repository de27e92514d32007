"""Lint stage: what the XSD cannot say about a governance or permissions document.

One pass per file: read it (`schema.read_document`: regular files, size caps), parse and
validate it as `validate` does (plain XML or the document inside an S/MIME file, line
numbers into the file), read it as the chosen --target would (GK301, GK302), then run every
selected rule of the registry (``govkit.check.rules.registry``; the rules live in ``rules_common``,
``rules_governance``, ``rules_permissions`` and ``rules_subjects``). A document that breaks
the XSD gets its schema findings (GK002) and only the rules that make sense without a valid
structure.

`govkit validate` runs the rules marked `validate` through :func:`lint_findings`, with
Cyclone DDS's limits and its historical messages (``lint/domain-range: ...``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.targets import DEFAULT_TARGET, TARGETS, Target

# importing a rules module registers its rules
from govkit.check.rules import common as rules_common  # noqa: F401
from govkit.check.rules import governance as rules_governance  # noqa: F401
from govkit.check.rules import permissions as rules_permissions  # noqa: F401
from govkit.check.rules import registry
from govkit.check.rules import subjects as rules_subjects  # noqa: F401
from govkit.check.rules.permissions import is_xml_datetime
from govkit.check.rules.registry import (
    BOTH,
    GOV,
    RULES,
    SEVERITY_RANK,
    Context,
    Rule,
    Severity,
    declare,
)
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind, Finding, quote_value
from govkit.documents.parse import ParsedDocument, local_name, text_value

__all__ = ["BOTH", "FileReport", "LintFinding", "LintOptions", "is_xml_datetime",
           "lint_bytes", "lint_findings", "lint_paths", "rules_table", "selected_rules",
           "worst"]

declare("GK301", "lenient-boolean", "warning", [GOV],
        "The target reads this boolean, but the OMG XSD's xs:boolean allows only true, "
        "false, 1 and 0, so validating tools (xmllint, sros2, govkit validate) and other "
        "implementations refuse the document", "<enable_join_access_control>TRUE</...>",
        note="replaces the schema error under a --target that accepts the spelling")
declare("GK302", "vendor-extension", "info", BOTH,
        "The target reads this extension element, but it is not DDS Security 1.1: other "
        "implementations refuse the document", "<enable_key_revision>true</...> (Connext)",
        note="replaces the schema error under a --target that reads the element")

_BOOLEANS = frozenset({
    "allow_unauthenticated_participants", "enable_join_access_control",
    "enable_discovery_protection", "enable_liveliness_protection",
    "enable_read_access_control", "enable_write_access_control"})


@dataclass(frozen=True)
class LintFinding:
    file: str
    line: int
    column: int
    rule: str
    name: str
    severity: Severity
    message: str
    why: str

    def __str__(self) -> str:
        return (f"{self.file}:{self.line}:{self.column}: {self.rule} {self.severity}: "
                f"{self.message}. {self.why}.")

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column,
                "rule": self.rule, "name": self.name, "severity": self.severity,
                "message": self.message, "why": self.why}


@dataclass
class LintOptions:
    target: str = DEFAULT_TARGET
    now: dt.datetime | None = None
    warn_days: int = 30
    ca: Path | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


@dataclass
class FileReport:
    file: str
    kind: DocumentKind | None = None
    findings: list[LintFinding] = field(default_factory=list)
    error: str | None = None          # the file could not be read at all (exit 2)

    def to_json(self) -> dict:
        return {"file": self.file, "kind": self.kind.value if self.kind else None,
                "error": self.error, "findings": [f.to_json() for f in self.findings]}


def selected_rules(select: list[str], ignore: list[str]) -> list[Rule]:
    """Rules chosen like ruff's --select/--ignore: ids, id prefixes (GK1) or names,
    comma-separated or repeated; ALL selects every rule. GovkitError for an unknown one."""
    def expand(items: list[str]) -> set[str]:
        chosen: set[str] = set()
        for item in (x.strip() for i in items for x in i.split(",")):
            if not item:
                continue
            found = {r.id for r in RULES.values() if item.upper() == "ALL"
                     or r.id.startswith(item.upper()) or r.name == item.lower()}
            if not found:
                raise GovkitError(f"unknown rule {quote_value(item)}: see `govkit lint "
                                  "--rules`", EXIT_USAGE)
            chosen |= found
        return chosen
    wanted = expand(select) if select else set(RULES)
    return [r for r in sorted(RULES.values(), key=lambda r: r.id)
            if r.id in wanted - expand(ignore)]


def lint_findings(doc: ParsedDocument, kind: DocumentKind) -> list[Finding]:
    """validate's lint pass over a schema-valid document: the `validate` rules with Cyclone
    DDS's limits, as `lint/<name>: message` findings."""
    ctx = Context(doc, DocumentKind(kind), TARGETS["cyclone"], dt.datetime.now(dt.UTC))
    out = []
    for r in RULES.values():
        if r.validate and ctx.kind in r.kinds:
            for hit in r.check(ctx):
                line, col = doc.locate(hit.elem)
                out.append(Finding(doc.filename, line, col, f"lint/{r.name}: {hit.message}"))
    return out


# --------------------------------------------------------------------------- targets


def _read_as_target(doc: ParsedDocument, target: Target) -> list[tuple[str, object, str]]:
    """Rewrite, in the parsed tree, what `target` reads leniently: booleans in another
    spelling become true/false, extension elements it reads are removed. Returns (rule,
    element, message) for each. The tree's position index is kept, so the schema findings
    that remain still point at the right lines."""
    changes: list[tuple[str, object, str]] = []
    for elem in list(doc.root.iter()):
        if not isinstance(elem.tag, str):
            continue
        name, parent = local_name(elem), elem.getparent()
        if name in _BOOLEANS and len(elem) == 0:
            text = text_value(elem)
            meaning = target.accepts_boolean(text)
            if text.strip() not in ("true", "false", "1", "0") and meaning is not None:
                elem.text = "true" if meaning else "false"
                changes.append(("GK301", elem, (
                    f"{name} {quote_value(text.strip())}: {target.short} reads it as "
                    f"{elem.text}; write {elem.text}")))
        elif parent is not None and (local_name(parent), name) in target.extensions:
            changes.append(("GK302", elem, f"<{name}> is a {target.short} extension"))
    for rule_id, elem, _ in changes:
        if rule_id == "GK302":
            _remove(elem)
    return changes


def _remove(elem) -> None:
    parent, tail = elem.getparent(), elem.tail
    previous = elem.getprevious()
    parent.remove(elem)   # keep the text after it, or the parent's text would change
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail


# --------------------------------------------------------------------------- the stage


def _finding(doc_file: str, doc: ParsedDocument | None, rule: Rule, elem, message: str,
             severity: Severity | None = None) -> LintFinding:
    line, col = doc.locate(elem) if doc is not None and elem is not None else (1, 1)
    return LintFinding(doc_file, line, col, rule.id, rule.name, severity or rule.severity,
                       message, rule.why)


def _from_finding(f: Finding, rule: Rule) -> LintFinding:
    return LintFinding(f.file, f.line, f.column, rule.id, rule.name, rule.severity,
                       f.message.rstrip("."), rule.why)


def lint_bytes(data: bytes, filename: str, options: LintOptions, rules: list[Rule],
               identities: list | None = None, ca_label: str = "") -> FileReport:
    from govkit.check import (
        validate as schema,  # schema imports this module (for validate's lint pass)
    )
    target = TARGETS[options.target]
    chosen = {r.id for r in rules}
    check = schema.check_bytes(data, filename, lint=False)
    report = FileReport(filename, check.kind)
    doc = check.document
    if check.kind is None or doc is None:
        report.findings = [_from_finding(f, RULES["GK001"]) for f in check.findings
                           if "GK001" in chosen]
        return report
    problems = check.findings
    if problems and target.name != "omg":
        changes = _read_as_target(doc, target)
        if changes:
            doc.tree_changed()
            problems = schema.schema_findings(doc, check.kind)
        report.findings += [_finding(doc.filename, doc, RULES[r], e, m) for r, e, m in changes
                            if r in chosen]
    report.findings += [_from_finding(f, RULES["GK002"]) for f in problems
                        if "GK002" in chosen]
    ctx = Context(doc, check.kind, target, options.now or dt.datetime.now(dt.UTC),
                  options.warn_days, identities, ca_label, valid=not problems)
    for r in rules:
        if r.check is None or ctx.kind not in r.kinds or (r.structural and not ctx.valid):
            continue
        if r.needs_ca and identities is None:
            continue
        for hit in r.check(ctx):
            report.findings.append(_finding(doc.filename, doc, r, hit.elem, hit.message,
                                            hit.severity))
    if ctx.exhausted and "GK003" in chosen:
        report.findings.append(_finding(doc.filename, doc, RULES["GK003"], doc.root, (
            f"stopped comparing rules with each other after {registry.WORK_BUDGET} "
            "comparisons; rules that never apply may be unreported")))
    report.findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return report


def lint_paths(paths: list[Path], options: LintOptions) -> list[FileReport]:
    """Lint every file; a file that cannot be read is a report with `error` set (the
    others are still linted). GovkitError for bad options or an unreadable --ca."""
    if options.target not in TARGETS:
        raise GovkitError(f"unknown target {options.target!r}", EXIT_USAGE)
    from govkit.check import validate as schema
    rules = selected_rules(options.select, options.ignore)
    identities = None
    if options.ca is not None:
        from govkit.pki.names import load_identities
        identities = load_identities(options.ca)
    reports = []
    for path in paths:
        try:
            data = schema.read_document(path)
        except GovkitError as e:
            reports.append(FileReport(str(path), error=str(e)))
            continue
        reports.append(lint_bytes(data, str(path), options, rules, identities,
                                  str(options.ca or "")))
    return reports


def worst(reports: list[FileReport]) -> int:
    """The highest severity rank found, -1 if none."""
    return max((SEVERITY_RANK[f.severity] for r in reports for f in r.findings), default=-1)


def rules_table() -> list[Rule]:
    return sorted(RULES.values(), key=lambda r: r.id)

