"""The document analysis commands: lint, identify, explain, diff (main.py registers
them).

No `from __future__ import annotations` here: typer would then evaluate every option's
annotation string at start-up (a few hundred evals, ~20 ms of `govkit --help`).
"""

from pathlib import Path
from typing import Annotated, Literal

import typer

from govkit.check.vocabulary import (
    DEFAULT_FAIL_ON,
    DEFAULT_OUTPUT_FORMAT,
    MAX_WARN_DAYS,
    OUTPUT_FORMATS,
    SEVERITIES,
)
from govkit.cli.common import (
    ExplainPolicyOpt,
    LintProtectionOpt,
    ProtectionOpt,
    TargetOpt,
    choices,
    comma_list,
    err,
    json_document,
    json_option,
    load_ros_input,
    out,
    uses_policy,
)
from govkit.common.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, GovkitError
from govkit.common.limits import MAX_DOMAIN_ID
from govkit.pki.vocabulary import DEFAULT_WARN_DAYS

# Start-up: nothing heavy at module level (govkit --help imports this module and the light
# vocabularies); each command imports what it uses.

SeverityName = Literal[SEVERITIES]
OutputFormat = Literal[OUTPUT_FORMATS]
CONFIGURED = ", or the [tool.govkit.lint] / govkit.toml [lint] setting"
IdentifyJson = json_option("identify", "fields: docs/guide/checking.md; ")
ExplainJson = json_option("explain", "fields: docs/guide/checking.md; ")
DiffJson = json_option("diff", "fields: docs/guide/checking.md; ")


def lint(
    files: Annotated[list[Path] | None, typer.Argument(
        help="Governance/permissions documents (XML or signed S/MIME), sros2 policies and "
             "protection sidecars.")] = None,
    ca: Annotated[Path | None, typer.Option(
        "--ca", help="Identity certificates to check grants against: a directory of PEM "
                     "files (e.g. a test PKI) or one PEM file; never created here.")] = None,
    target: TargetOpt = None,
    warn_days: Annotated[int | None, typer.Option(
        "--warn-days", min=0, max=MAX_WARN_DAYS, show_default=False,
        help=f"Warn when a grant expires within this many days. Default: "
             f"{DEFAULT_WARN_DAYS}{CONFIGURED}"
    )] = None,
    fail_on: Annotated[SeverityName | None, typer.Option(
        "--fail-on", metavar=choices(SEVERITIES), show_default=False,
        help=f"Exit 1 when a finding has at least this severity. Default: {DEFAULT_FAIL_ON}"
             f"{CONFIGURED}")] = None,
    select: Annotated[list[str] | None, typer.Option(
        "--select", callback=comma_list,
        help="Only these rules: ids, id prefixes (GK2) or names, comma-separated or "
             "repeated; ALL for every rule (`govkit lint --rules` lists them).")] = None,
    ignore: Annotated[list[str] | None, typer.Option(
        "--ignore", callback=comma_list,
        help="Leave out these rules (same forms as --select: comma-separated or repeated); a "
             "'<!-- govkit: ignore RULE -->' comment leaves out one line's.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="The same as --output-format json (schema govkit.lint/1).")] = False,
    output_format: Annotated[OutputFormat | None, typer.Option(
        "--output-format", metavar=choices(OUTPUT_FORMATS), show_default=False,
        help=f"full (each finding with why it matters), concise (one line each), json, "
             f"github (Actions annotations), sarif (2.1.0, code scanning), junit (XML, one "
             f"testcase per file). Default: {DEFAULT_OUTPUT_FORMAT}{CONFIGURED}")] = None,
    list_rules: Annotated[bool, typer.Option(
        "--rules", help="List every rule with its id, severity, why and an example.")] = False,
    protection: LintProtectionOpt = None,
):
    """Check what the XSD cannot: rules that never apply, what leaks, subjects, validity;
    for an sros2 policy and its protection, names that miss their protection and DENYs
    that never apply."""
    from govkit.cli.lint_validate import run_lint
    raise typer.Exit(run_lint(files, ca=ca, target=target, warn_days=warn_days, fail_on=fail_on,
                              select=select, ignore=ignore, as_json=as_json,
                              output_format=output_format, list_rules=list_rules,
                              protection=protection))


def identify(files: Annotated[list[Path], typer.Argument(help="Governance documents.")],
             as_json: IdentifyJson = False):
    """Name the catalog profile a governance document implements (or the nearest one)."""
    from govkit.check.identify import identification_text, identify_paths
    results = identify_paths(files)
    if as_json:
        print(json_document("identify", files=[r.to_json() for r in results]))
    else:
        for r in results:
            (err if r.error and r.kind is None else out).print(identification_text(r), markup=False)
    code = EXIT_OK if all(r.ok for r in results) else EXIT_INVALID
    if any(r.error and r.kind is None for r in results):
        code = EXIT_USAGE
    raise typer.Exit(code)


def explain(file: Annotated[Path | None, typer.Argument(
                help="A governance or permissions document.")] = None,
            as_json: ExplainJson = False,
            policy: ExplainPolicyOpt = None, protection: ProtectionOpt = None,
            domain: Annotated[int, typer.Option(
                "--domain", min=0, max=MAX_DOMAIN_ID,
                help="With --policy: the domain id to decide for.")] = 0):
    """Say in plain English what a document protects and what it does not (with --policy:
    what the documents of an sros2 policy decide, name by name)."""
    if uses_policy(policy, protection, {"FILE": file}, "explains the policy's documents"):
        from govkit.check.ros_explain import explain_policy, policy_explanation_text
        explanation = explain_policy(load_ros_input(policy, protection), domain)
        if as_json:
            print(json_document("explain", **explanation))
        else:
            out.print(policy_explanation_text(explanation), markup=False)
        return
    if file is None:
        raise GovkitError("give the document to explain (or --policy POLICY)")
    from govkit.check.explain import explain_document, explanation_text
    from govkit.check.loaded import load_document
    explanation = explain_document(load_document(file))
    if as_json:
        print(json_document("explain", **explanation))
    else:
        out.print(explanation_text(explanation), markup=False)


def diff(a: Annotated[Path, typer.Argument(help="The first document (A).")],
         b: Annotated[Path, typer.Argument(help="The second document (B), of the same kind.")],
         as_json: DiffJson = False):
    """Semantic difference of two governance (or two permissions) documents."""
    from govkit.check.diff import diff_documents
    from govkit.check.loaded import load_document
    docs = [load_document(p) for p in (a, b)]
    changes = diff_documents(*docs)
    for d in docs:
        if d.problems:
            err.print(f"govkit: warning: {d.file} is not valid against the DDS Security 1.1 "
                      f"XSD ({len(d.problems)} problem(s), see govkit validate); compared as "
                      "read leniently", markup=False)
    if as_json:
        print(json_document("diff", a=str(a), b=str(b),
                                         kind=docs[0].kind.value, same=not changes,
                            changes=[c.to_json() for c in changes]))
    else:
        for c in changes:
            out.print(str(c), markup=False)
        out.print(f"{len(changes)} difference(s)" if changes else "no semantic difference",
                  markup=False)
    raise typer.Exit(EXIT_INVALID if changes else EXIT_OK)
