"""The lint rule engine: the whole rule table and the two ways to run it.

Importing a rules module (`common`, `governance`, `permissions`, `subjects`, `targets`)
registers its rules in govkit.check.rules.registry; this module imports all six, so the
table is whole wherever it is read through here. `validate` (and `sign`) run the rules
marked `validate` through :func:`lint_findings`, under the same --target as lint; the
`lint` command (govkit.check.lint) chooses rules with :func:`selected_rules`. Below
govkit.check.validate: nothing here validates.
"""

from __future__ import annotations

import datetime as dt

from govkit.catalog.targets import DEFAULT_TARGET, TARGETS

# importing a rules module registers its rules
from govkit.check.rules import (  # noqa: F401
    common,
    governance,
    permissions,
    ros,
    subjects,
    targets,
)
from govkit.check.rules.registry import RULES, Context, Rule
from govkit.common.errors import EXIT_USAGE, GovkitError
from govkit.common.findings import DocumentKind, Finding, quote_value
from govkit.documents.parse import ParsedDocument


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


def lint_findings(doc: ParsedDocument, kind: DocumentKind, target: str = DEFAULT_TARGET
                  ) -> tuple[list[Finding], list[Finding]]:
    """validate's lint pass over a schema-valid document: the `validate` rules as `target`
    reads the document, the same verdicts as `govkit lint --target TARGET`. Returns
    (errors, warnings), each worded as lint's concise format words it: `GK010 error:
    message`. Errors make the document invalid; warnings (an implementation other than the
    target's reads it differently) do not."""
    ctx = Context(doc, DocumentKind(kind), TARGETS[target], dt.datetime.now(dt.UTC))
    errors, warnings = [], []
    for r in RULES.values():
        if r.validate and ctx.kind in r.kinds:
            for hit in r.check(ctx):
                line, col = doc.locate(hit.elem)
                severity = hit.severity or r.severity
                found = Finding(doc.filename, line, col, f"{r.id} {severity}: {hit.message}")
                (errors if severity == "error" else warnings).append(found)
    return errors, warnings


def rules_table() -> list[Rule]:
    """Every rule, by id."""
    return sorted(RULES.values(), key=lambda r: r.id)
