"""`govkit lint --output-format`: the same reports written for a person (concise, full),
for programs (json), for GitHub Actions (github annotations), for code scanning (SARIF
2.1.0) and for test dashboards (JUnit XML).

Every format escapes what it copies from the input: a file name or a message may hold a
newline, `::`, `%`, `<` or bytes that are not UTF-8, and none of them may end a line, start
an annotation, or break the XML or JSON around it.
"""

from __future__ import annotations

import json
import re
from functools import cache
from urllib.parse import quote

from govkit.check.lint import FileReport, LintFinding
from govkit.check.rules.engine import rules_table
from govkit.check.rules.registry import SEVERITY_RANK, Rule
from govkit.common.findings import without_surrogates

__all__ = ["SARIF_SCHEMA_URI", "format_lint", "lint_json", "summary_counts"]

SARIF_SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                    "sarif-schema-2.1.0.json")
# SARIF and GitHub know error, warning and note; govkit's info is a note.
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB = {"error": "error", "warning": "warning", "info": "notice"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@cache
def _not_xml() -> re.Pattern:
    """What XML 1.0 has no way to write at all, escaped or not (compiled on first use: the
    pattern costs 8 ms, a tenth of a lint of one file, and only JUnit needs it)."""
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(s: str) -> str:
    """`s` made printable: bytes that were not UTF-8 (surrogate escapes from a file name)
    as \\xNN."""
    return s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _one_line(s: str) -> str:
    """`s` on one line: control characters as \\n, \\t, \\xNN (a file name with a newline
    must not look like two findings)."""
    def escape(m: re.Match) -> str:
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m.group(), f"\\x{ord(m.group()):02x}")
    return _CONTROL.sub(escape, _text(s))


def summary_counts(reports: list[FileReport]) -> dict[str, int]:
    return {s: sum(f.severity == s for r in reports for f in r.findings)
            for s in ("error", "warning", "info")}


# --------------------------------------------------------------------------- text


def _text_format(reports: list[FileReport], target: str, full: bool) -> str:
    lines = []
    for r in reports:
        for f in r.findings:
            line = (f"{_one_line(f.file)}:{f.line}:{f.column}: {f.rule} {f.severity}: "
                    f"{_one_line(f.message)}")
            lines.append(f"{line}. {_one_line(f.why)}." if full else line)
    counts = summary_counts(reports)
    said = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}"
                     for s, n in counts.items() if n)
    unreadable = sum(r.error is not None for r in reports)
    if unreadable:       # "no findings" would be false: those files were never looked at
        said = ", ".join(x for x in (said, f"{unreadable} unreadable (not linted)") if x)
    lines.append(f"{len(reports)} file(s), target {target}: {said or 'no findings'}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- json


def lint_json(reports: list[FileReport], target: str) -> dict:
    """The `govkit.lint/1` document (schemas/json/lint.schema.json)."""
    return {"schema": "govkit.lint/1", "target": target,
            "files": [r.to_json() for r in reports],
            "summary": {**summary_counts(reports), "files": len(reports),
                        "unreadable": sum(bool(r.error) for r in reports),
                        "suppressed": sum(r.suppressed for r in reports)}}


# --------------------------------------------------------------------------- github


def _gh_data(s: str) -> str:
    # The runner's own escaping (actions/toolkit command.ts): % first, then CR and LF.
    return _text(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def _github(reports: list[FileReport]) -> str:
    lines = []
    for r in reports:
        if r.error:
            lines.append(f"::error file={_gh_property(r.file)},title=govkit::"
                         f"{_gh_data(r.error)}")
        for f in r.findings:
            title = _gh_property(f"{f.rule} {f.name}")
            lines.append(f"::{_GITHUB[f.severity]} file={_gh_property(f.file)},line={f.line},"
                         f"col={f.column},title={title}::{_gh_data(f'{f.message}. {f.why}.')}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- sarif


def _uri(path: str) -> str:
    """A file name as a URI reference: absolute paths as file:// URIs, relative ones
    relative (code scanning resolves them against the checkout); every byte that is not
    unreserved percent-encoded."""
    raw = path.encode("utf-8", "surrogateescape")
    encoded = quote(raw, safe="/")
    return f"file://{encoded}" if path.startswith("/") else encoded


def _sarif_rule(r: Rule) -> dict:
    return {"id": r.id, "name": r.name,
            "shortDescription": {"text": _text(r.why) + "."},
            "fullDescription": {"text": _text(f"{r.why}. {r.note}" if r.note else r.why + ".")},
            "help": {"text": _text(f"Example: {r.example}")},
            "defaultConfiguration": {"level": _LEVEL[r.severity]},
            "properties": {"kinds": [k.value for k in r.kinds]}}


def _sarif_result(f: LintFinding, index: dict[str, int]) -> dict:
    return {"ruleId": f.rule, "ruleIndex": index[f.rule], "level": _LEVEL[f.severity],
            "message": {"text": _text(f"{f.message}. {f.why}.")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(f.file)},
                "region": {"startLine": max(1, f.line), "startColumn": max(1, f.column)}}}]}


def sarif(reports: list[FileReport], version: str) -> dict:
    rules = rules_table()
    index = {r.id: i for i, r in enumerate(rules)}
    notes = [{"level": "error", "message": {"text": _text(r.error)},
              "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(r.file)}}}]}
             for r in reports if r.error]
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "govkit", "version": version,
                            "rules": [_sarif_rule(r) for r in rules]}},
        "invocations": [{"executionSuccessful": not notes,
                         "toolExecutionNotifications": notes}],
        "results": [_sarif_result(f, index) for r in reports for f in r.findings]}]}


# --------------------------------------------------------------------------- junit


def _xml(s: str) -> str:
    """Text for an XML attribute or element: metacharacters as entities, and what XML 1.0
    cannot hold at all (NUL, most control characters) as \\xNN."""
    s = _not_xml().sub(lambda m: f"\\x{ord(m.group()):02x}", _text(s))
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


def _junit(reports: list[FileReport], fail_on: str) -> str:
    """One testcase per file; a finding at or above --fail-on is a failure (the exit code
    says the same), lower ones go to the testcase's system-out; an unreadable file is an
    error."""
    bar = SEVERITY_RANK[fail_on]
    cases, failures, errors = [], 0, 0
    for r in reports:
        body = []
        if r.error:
            errors += 1
            body.append(f'<error type="unreadable" message="{_xml(r.error)}"/>')
        below = []
        for f in r.findings:
            where = f"{f.file}:{f.line}:{f.column}"
            if SEVERITY_RANK[f.severity] >= bar:
                failures += 1
                said = f"{where}: {f.rule} {f.name} {f.severity}: {f.message}. {f.why}."
                body.append(f'<failure type="{f.rule}" message="{_xml(f.message)}">'
                            f"{_xml(said)}</failure>")
            else:
                below.append(f"{where}: {f.rule} {f.severity}: {f.message}")
        if below:
            body.append(f"<system-out>{_xml(chr(10).join(below))}</system-out>")
        cases.append(f'  <testcase classname="govkit.lint" name="{_xml(r.file)}">'
                     + "".join(body) + "</testcase>")
    head = (f'<testsuite name="govkit lint" tests="{len(reports)}" failures="{failures}" '
            f'errors="{errors}" skipped="0">')
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>", head, *cases,
                      "</testsuite>", "</testsuites>"])


# --------------------------------------------------------------------------- dispatch


def format_lint(fmt: str, reports: list[FileReport], target: str, fail_on: str = "error",
           version: str = "") -> str:
    """The reports in format `fmt` (one of OUTPUT_FORMATS), without a final newline."""
    if fmt in ("full", "concise"):
        return _text_format(reports, target, full=fmt == "full")
    if fmt == "json":
        return json.dumps(without_surrogates(lint_json(reports, target)), indent=2)
    if fmt == "github":
        return _github(reports)
    if fmt == "sarif":
        return json.dumps(without_surrogates(sarif(reports, version)), indent=2)
    if fmt == "junit":
        return _junit(reports, fail_on)
    raise ValueError(f"unknown output format {fmt!r}")
