"""The lint command's engine: what the XSD cannot say about a governance or permissions
document (and, through govkit.check.ros_lint, about an sros2 policy and its protection
sidecar).

One pass per file: read it (`validate.read_document`: regular files, size caps), parse and
validate it as `validate` does (plain XML or the document inside an S/MIME file, line
numbers into the file), read it as the chosen --target would (GK301, GK302), then run every
selected rule of the registry (``govkit.check.rules.registry``; the rules live in
``govkit.check.rules``: ``common``, ``governance``, ``permissions``, ``subjects``,
``targets``). A document that breaks the XSD gets its schema findings (GK002) and only the
rules that make sense without a valid structure.

`govkit validate` and `govkit sign` run the rules marked `validate` through
:func:`lint_findings` under the same --target and with the same rule ids (``GK010 error:
...``), so the three commands give one verdict per target.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from govkit.catalog.targets import DEFAULT_TARGET, PORTABLE_TARGET, TARGETS
from govkit.check import validate
from govkit.check.ros_lint import ROS_ROOTS, lint_ros
from govkit.check.rules.engine import selected_rules
from govkit.check.rules.registry import RULES, SEVERITY_RANK, WORK_BUDGET, Context, Rule, Severity
from govkit.check.rules.targets import read_as_target
from govkit.check.suppress import apply_suppressions, find_suppressions
from govkit.check.xsd import schema_findings
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentError, DocumentKind, Finding
from govkit.documents.parse import ParsedDocument, local_name, parse_xml
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS

__all__ = ["FileReport", "LintFinding", "LintOptions", "lint_bytes", "lint_paths", "worst"]

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
    warn_days: int = DEFAULT_WARN_DAYS
    ca: Path | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    protection: Path | None = None    # the sidecar of the sros2 policies linted


@dataclass
class FileReport:
    file: str
    kind: DocumentKind | None = None
    findings: list[LintFinding] = field(default_factory=list)
    error: str | None = None          # the file could not be read at all (exit 2)
    suppressed: int = 0               # findings a `govkit: ignore` comment left out

    def to_json(self) -> dict:
        return {"file": self.file, "kind": self.kind.value if self.kind else None,
                "error": self.error, "findings": [f.to_json() for f in self.findings],
                "suppressed": self.suppressed}


# --------------------------------------------------------------------------- the stage


def _finding(doc_file: str, doc: ParsedDocument | None, rule: Rule, elem, message: str,
             severity: Severity | None = None) -> LintFinding:
    line, col = doc.locate(elem) if doc is not None and elem is not None else (1, 1)
    return LintFinding(doc_file, line, col, rule.id, rule.name, severity or rule.severity,
                       message, rule.why)


def _from_finding(f: Finding, rule: Rule) -> LintFinding:
    return LintFinding(f.file, f.line, f.column, rule.id, rule.name, rule.severity,
                       f.message.rstrip("."), rule.why)


def _ros_kind(data: bytes, filename: str) -> DocumentKind | None:
    """POLICY or PROTECTION for an sros2 policy or a protection sidecar, else None."""
    try:
        root = parse_xml(data, filename).root
    except DocumentError:
        return None
    return ROS_ROOTS.get(local_name(root)) if "}" not in str(root.tag) else None


def _ros_report(data: bytes, filename: str, kind: DocumentKind, options: LintOptions,
                rules: list[Rule]) -> FileReport:
    found = lint_ros(data, filename, kind, rules, options.target, options.now,
                     options.protection)
    chosen = {r.id for r in rules}
    report = FileReport(filename, kind, [
        LintFinding(file, line, column, r.id, r.name, severity, message, r.why)
        for r, file, line, column, message, severity in found.findings if r.id in chosen])
    _suppress(report, data, filename, chosen)
    report.findings.sort(key=lambda f: (f.file != filename, f.file, f.line, f.column, f.rule))
    return report


def lint_bytes(data: bytes, filename: str, options: LintOptions, rules: list[Rule],
               identities: list | None = None, ca_label: str = "") -> FileReport:
    target = TARGETS[options.target]
    chosen = {r.id for r in rules}
    ros = _ros_kind(data, filename)
    if ros is not None:
        return _ros_report(data, filename, ros, options, rules)
    check = validate.check_bytes(data, filename, lint=False)
    report = FileReport(filename, check.kind)
    doc = check.document
    if check.kind is None or doc is None:
        report.findings = [_from_finding(f, RULES["GK001"]) for f in check.findings
                           if "GK001" in chosen]
        return report
    problems = check.findings
    if problems and target.name != PORTABLE_TARGET:
        changes = read_as_target(doc, target)
        if changes:
            doc.tree_changed()
            problems = schema_findings(doc, check.kind)
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
            f"stopped comparing rules with each other after {WORK_BUDGET} "
            "comparisons; rules that never apply may be unreported")))
    _suppress(report, data, doc.filename, chosen)
    report.findings.sort(key=lambda f: (f.line, f.column, f.rule))
    return report


def _suppress(report: FileReport, data: bytes, filename: str, chosen: set[str]) -> None:
    """Leave out what `govkit: ignore` comments cover; a wrong one is a GK004 finding."""
    found = find_suppressions(data)
    if not found:
        return
    report.findings, report.suppressed, problems = apply_suppressions(report.findings, found,
                                                                      chosen)
    if "GK004" in chosen:
        rule = RULES["GK004"]
        report.findings += [LintFinding(filename, s.line, s.column, rule.id, rule.name,
                                        rule.severity, message, rule.why)
                            for s, message in problems]


def lint_paths(paths: list[Path], options: LintOptions) -> list[FileReport]:
    """Lint every file; a file that cannot be read is a report with `error` set (the
    others are still linted). GovkitError for bad options or an unreadable --ca."""
    if options.target not in TARGETS:
        raise GovkitError(f"unknown target {options.target!r}", EXIT_USAGE)
    rules = selected_rules(options.select, options.ignore)
    identities = None
    if options.ca is not None:
        from govkit.pki.names import load_identities
        identities = load_identities(options.ca)
    reports = []
    for path in paths:
        try:
            data = validate.read_document(path)
        except GovkitError as e:
            reports.append(FileReport(str(path), error=str(e)))
            continue
        reports.append(lint_bytes(data, str(path), options, rules, identities,
                                  str(options.ca or "")))
    return reports


def worst(reports: list[FileReport]) -> int:
    """The highest severity rank found, -1 if none."""
    return max((SEVERITY_RANK[f.severity] for r in reports for f in r.findings), default=-1)
