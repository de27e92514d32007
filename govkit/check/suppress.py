"""Inline suppressions for lint: an XML comment in the document itself.

    <!-- govkit: ignore GK213 -->            the findings of GK213 on this line and the next
    <!-- govkit: ignore GK2, broad-partition -->   ids, id prefixes, names, as --ignore takes
    <!-- govkit: ignore -->                  every finding on this line and the next
    <!-- govkit: ignore-file GK210 -->       GK210 anywhere in the file

A comment is found on the line it starts on, in the file as read (so line numbers are the
findings' own, in an S/MIME file too). A suppression that names no rule, or that
suppresses nothing it could have (its rules were run and found nothing there), is itself
a finding (GK004): a stale suppression would otherwise hide the next real finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from govkit.check.rules.engine import rules_table

__all__ = ["Suppression", "apply_suppressions", "find_suppressions"]

_COMMENT = re.compile(rb"<!--\s*govkit:\s*ignore(-file)?(?=[\s,-])(.*?)-->")
_MAX_SHOWN = 40     # characters of an unknown rule name quoted back


@dataclass
class Suppression:
    line: int
    column: int
    file_wide: bool
    rules: set[str]                       # rule ids; every rule when the comment names none
    unknown: list[str] = field(default_factory=list)
    used: bool = False

    def covers(self, line: int, rule: str) -> bool:
        return (self.file_wide or line in (self.line, self.line + 1)) and rule in self.rules


def _resolve(token: str) -> set[str]:
    return {r.id for r in rules_table() if token.upper() == "ALL"
            or r.id.startswith(token.upper()) or r.name == token.lower()}


def find_suppressions(data: bytes) -> list[Suppression]:
    """Every `govkit: ignore` comment in `data`, with its 1-based line and column."""
    found = []
    for number, line in enumerate(data.split(b"\n"), 1):
        for m in _COMMENT.finditer(line):
            tokens = [t for t in re.split(r"[\s,]+", m.group(2).decode("ascii", "replace")) if t]
            rules: set[str] = set() if tokens else _resolve("ALL")
            unknown = []
            for t in tokens:
                ids = _resolve(t)
                rules |= ids
                if not ids:
                    unknown.append(t[:_MAX_SHOWN])
            found.append(Suppression(number, m.start() + 1, bool(m.group(1)), rules, unknown))
    return found


def apply_suppressions(findings: list, suppressions: list[Suppression], chosen: set[str]
                       ) -> tuple[list, int, list[tuple[Suppression, str]]]:
    """The findings no suppression covers, how many were suppressed, and what is wrong
    with the suppressions themselves (each with a sentence for GK004). `chosen`: the rules
    that ran (a suppression of a rule left out by --select/--ignore is not unused)."""
    kept, suppressed = [], 0
    for f in findings:
        covering = [s for s in suppressions if s.covers(f.line, f.rule)]
        for s in covering:
            s.used = True
        if covering:
            suppressed += 1
        else:
            kept.append(f)
    problems = []
    for s in suppressions:
        kind = "ignore-file" if s.file_wide else "ignore"
        if s.unknown:
            problems.append((s, f"'govkit: {kind}' names no rule: "
                                f"{', '.join(map(repr, s.unknown))} (see govkit lint --rules)"))
        elif not s.used and s.rules <= chosen:
            shown = ", ".join(sorted(s.rules)) if len(s.rules) <= 5 else "its rules"
            where = "in this file" if s.file_wide else "on this line or the next"
            problems.append((s, f"'govkit: {kind}' suppresses nothing: no finding of "
                                f"{shown} {where}"))
    return kept, suppressed, problems
